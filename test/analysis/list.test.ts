import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { analysisProcessor } from "../../workers/analysis.js";
import { createHarness, type Harness } from "../helpers/harness.js";
import { person } from "../workspaces/support.js";
import { CORPUS } from "./corpus.js";
import { createTenant, storeSources, type Tenant } from "./fixtures.js";
import { listen, openStream } from "./sse-client.js";

/**
 * `GET /api/analyses`: the analyses a caller may read, newest first, filtered by entity, project,
 * workspace and status, paged by a keyset cursor. Alice's workspace holds analyses run through the API
 * (to a result, by an in-process worker) and older ones written as a worker leaves them; Bob's workspace
 * holds his. Every member of a workspace lists its analyses (a viewer too); nobody else sees one, and
 * naming a scope the caller cannot see is a 404. Real HTTP, PostgreSQL, Redis and worker.
 */
let h: Harness;
let base: string;
let closeServer: () => Promise<void>;
let alice: Tenant;
let bob: Tenant;
/** Alice's analyses run through the API: on her entity (finished) and on her project (finished). */
let onEntity: string;
let onProject: string;
/** Alice's analysis of no workspace: hers alone. */
let personal: string;
/** Rows as a worker leaves them, in Alice's workspace, on her entity, all created at the same instant. */
let sameInstant: string[];
let bobsAnalysis: string;

const auth = (token: string) => ({ Authorization: `Bearer ${token}` });

/** A stored result, as the worker writes one (only the parts the counts read are filled in). */
const STORED_RESULT = {
  status: "completed",
  data: {
    answer: "Pricing [1] and onboarding [2].",
    citations: [],
    insights: [{ title: "Pricing" }, { title: "Onboarding" }],
    evidence: [{ content_id: "a" }, { content_id: "b" }, { content_id: "c" }],
    coverage: { reddit: { in_scope: 10, retrieved: 5, cited: 2 }, hackernews: { in_scope: 3, retrieved: 3, cited: 1 } },
    limitations: [],
    engine: "extractive",
    scope: {},
  },
};

interface Item {
  analysis_id: string;
  question: string;
  status: string;
  depth: string;
  search_mode: string;
  scope: { workspace_id: string | null; entity_id: string | null; project_id: string | null };
  started_by: string;
  created_at: string;
  finished_at: string | null;
  counts: { sources_in_scope: number; sources_analysed: number; sources_cited: number; insights: number; evidence: number } | null;
  links: { self: string; events: string; share: { method: string; href: string; body: { resource: string; id: string } } };
}
interface Page {
  analyses: Item[];
  limit: number;
  has_more: boolean;
  next_cursor: string | null;
}

async function list(token: string, query: Record<string, string | number | undefined> = {}) {
  const res = await h.http.get("/api/analyses").query(query).set(auth(token));
  return res as unknown as { status: number; body: Page & { detail?: unknown; code?: string } };
}

async function listOk(token: string, query: Record<string, string | number> = {}): Promise<Page> {
  const res = await list(token, query);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

/** Every page of a listing, following next_cursor. */
async function allPages(token: string, query: Record<string, string | number>): Promise<Item[][]> {
  const pages: Item[][] = [];
  let cursor: string | null = null;
  do {
    const page: Page = await listOk(token, { ...query, ...(cursor ? { cursor } : {}) });
    pages.push(page.analyses);
    expect(page.has_more).toBe(page.next_cursor !== null);
    cursor = page.next_cursor;
  } while (cursor && pages.length < 50);
  return pages;
}

const ids = (items: Item[]) => items.map((i) => i.analysis_id);

/** Runs an analysis through the API and waits for its stream to end; answers its id. */
async function runToEnd(token: string, body: Record<string, unknown>): Promise<string> {
  const stream = await openStream(`${base}/agent/v1/analysis/run`, { method: "POST", token, body });
  expect(stream.status).toBe(200);
  await stream.closed;
  return stream.headers.get("x-analysis-id") as string;
}

beforeAll(async () => {
  h = await createHarness();
  ({ baseUrl: base, close: closeServer } = await listen(h));
  alice = await createTenant(h, "Acme");
  bob = await createTenant(h, "Globex");
  // The analyses read the stored originals unenriched (their opinion units computed as they run).
  h.startWorkers({ "analysis.run.v1": analysisProcessor });
  await storeSources(h, alice, CORPUS);

  // Older analyses, as a worker leaves them, all at one instant: the id orders them.
  const at = new Date("2026-01-05T10:00:00.000Z");
  sameInstant = [];
  for (const [i, status] of (["completed", "failed", "cancelled", "completed", "partial"] as const).entries()) {
    const row = await h.deps.db.analysis.create({
      data: {
        userId: alice.userId,
        workspaceId: alice.workspaceId,
        entityId: alice.entityId,
        question: `Earlier question ${i}`,
        status,
        createdAt: at,
        finishedAt: at,
        ...(i === 0 ? { result: STORED_RESULT } : {}),
      },
    });
    sameInstant.push(row.id);
  }
  bobsAnalysis = (
    await h.deps.db.analysis.create({
      data: { userId: bob.userId, workspaceId: bob.workspaceId, entityId: bob.entityId, question: "Bob's question", status: "queued" },
    })
  ).id;

  onEntity = await runToEnd(alice.token, { question: "What do users think about Acme pricing?", entity_id: alice.entityId });
  onProject = await runToEnd(alice.token, { question: "What do people say about onboarding?", project_id: alice.projectId, depth: "deep" });
  // An analysis of no workspace (its starter was a member of none when it was requested): its starter's alone.
  personal = (await h.deps.db.analysis.create({ data: { userId: alice.userId, question: "Anything about support?", status: "queued" } }))
    .id;
}, 60_000);
afterAll(async () => {
  await closeServer?.();
  await h?.close();
});

describe("GET /api/analyses", () => {
  it("lists the caller's analyses newest first, each with its scope, timestamps, counts from its result and links", async () => {
    const page = await listOk(alice.token);
    expect(ids(page.analyses)).toEqual([personal, onProject, onEntity, ...[...sameInstant].sort().reverse()]);
    expect(page).toMatchObject({ limit: 50, has_more: false, next_cursor: null });

    const item = page.analyses.find((a) => a.analysis_id === onEntity) as Item;
    const record = await h.http.get(item.links.self).set(auth(alice.token)).expect(200);
    const result = record.body.result.data as {
      insights: unknown[];
      evidence: { content_id: string }[];
      coverage: Record<string, { in_scope: number; retrieved: number; cited: number }>;
    };
    const sum = (field: "in_scope" | "retrieved" | "cited") => Object.values(result.coverage).reduce((n, c) => n + c[field], 0);
    expect(item).toEqual({
      analysis_id: onEntity,
      question: "What do users think about Acme pricing?",
      status: record.body.status,
      depth: "brief",
      search_mode: "multi_source",
      scope: { workspace_id: alice.workspaceId, entity_id: alice.entityId, project_id: null },
      started_by: alice.userId,
      created_at: record.body.created_at,
      finished_at: record.body.finished_at,
      counts: {
        sources_in_scope: sum("in_scope"),
        sources_analysed: sum("retrieved"),
        sources_cited: new Set(result.evidence.map((e) => e.content_id)).size,
        insights: result.insights.length,
        evidence: result.evidence.length,
      },
      links: {
        self: `/agent/v1/analysis/${onEntity}`,
        events: `/agent/v1/analysis/${onEntity}/events`,
        share: { method: "POST", href: "/api/share-links", body: { resource: "analysis", id: onEntity } },
      },
    });
    expect(["completed", "partial"]).toContain(item.status);
    expect(page.analyses.find((a) => a.analysis_id === sameInstant[0])?.counts).toEqual({
      sources_in_scope: 13,
      sources_analysed: 8,
      sources_cited: 3,
      insights: 2,
      evidence: 3,
    });

    const project = page.analyses.find((a) => a.analysis_id === onProject) as Item;
    expect(project).toMatchObject({
      depth: "deep",
      scope: { workspace_id: alice.workspaceId, entity_id: null, project_id: alice.projectId },
    });
    expect(page.analyses.find((a) => a.analysis_id === personal)?.scope).toEqual({ workspace_id: null, entity_id: null, project_id: null });
    // Written without a result: no counts.
    expect(page.analyses.find((a) => a.analysis_id === sameInstant[1])).toMatchObject({ status: "failed", counts: null });
    expect(ids(page.analyses)).not.toContain(bobsAnalysis);
  });

  it("follows its links: the events replay the stream, and the share link opens the analysis's page", async () => {
    const item = (await listOk(alice.token, { entity_id: alice.entityId, limit: 1 })).analyses[0] as Item;
    expect(item.analysis_id).toBe(onEntity);
    const events = await openStream(`${base}${item.links.events}`, { token: alice.token });
    expect(events.status).toBe(200);
    await events.closed;
    expect(events.events.at(-1)?.event).toBe("result");

    const link = await h.http.post(item.links.share.href).set(auth(alice.token)).send(item.links.share.body);
    expect(link.status, JSON.stringify(link.body)).toBe(201);
    const page = await fetch(link.body.url.replace(/^https?:\/\/[^/]+/, base));
    expect(page.status).toBe(200);
    expect(await page.text()).toContain("What do users think about Acme pricing?");
  });

  it("filters by entity, project, workspace and status, together as well", async () => {
    expect(ids((await listOk(alice.token, { entity_id: alice.entityId })).analyses)).toEqual([
      onEntity,
      ...[...sameInstant].sort().reverse(),
    ]);
    expect(ids((await listOk(alice.token, { project_id: alice.projectId })).analyses)).toEqual([onProject]);
    // A workspace's analyses: not those of no workspace.
    expect(ids((await listOk(alice.token, { workspace_id: alice.workspaceId })).analyses)).toEqual([
      onProject,
      onEntity,
      ...[...sameInstant].sort().reverse(),
    ]);
    const failed = await listOk(alice.token, { status: "failed" });
    expect(ids(failed.analyses)).toEqual([sameInstant[1]]);
    const completedOnEntity = await listOk(alice.token, {
      entity_id: alice.entityId,
      workspace_id: alice.workspaceId,
      status: "completed",
    });
    for (const item of completedOnEntity.analyses)
      expect(item).toMatchObject({ status: "completed", scope: { entity_id: alice.entityId } });
    expect(ids(completedOnEntity.analyses)).toEqual(expect.arrayContaining([sameInstant[0], sameInstant[3]]));
    // An entity and a project that share no analysis: an empty page, not an error.
    expect((await listOk(alice.token, { entity_id: alice.entityId, project_id: alice.projectId })).analyses).toEqual([]);
  });

  it("pages by cursor: every analysis once, in order, also when analyses are added meanwhile", async () => {
    const whole = ids((await listOk(alice.token)).analyses);
    const pages = await allPages(alice.token, { limit: 2 });
    expect(pages.map((p) => p.length)).toEqual([2, 2, 2, 2]);
    expect(pages.flatMap(ids)).toEqual(whole);

    // A new analysis while paging lands before the first page; the pages after the cursor do not move.
    const first = await listOk(alice.token, { limit: 3 });
    const added = await h.deps.db.analysis.create({
      data: {
        userId: alice.userId,
        workspaceId: alice.workspaceId,
        entityId: alice.entityId,
        question: "Added meanwhile",
        status: "queued",
      },
    });
    const rest: Item[] = [];
    let cursor = first.next_cursor;
    while (cursor) {
      const page = await listOk(alice.token, { limit: 3, cursor });
      rest.push(...page.analyses);
      cursor = page.next_cursor;
    }
    expect([...ids(first.analyses), ...ids(rest)]).toEqual(whole);
    expect(ids((await listOk(alice.token, { limit: 1 })).analyses)).toEqual([added.id]);
    await h.deps.db.analysis.delete({ where: { id: added.id } });

    // The same instant for several rows: the id breaks the tie, so a page boundary between them loses none.
    const tied = await allPages(alice.token, { entity_id: alice.entityId, status: "completed", limit: 1 });
    expect(tied.flat().length).toBe(new Set(tied.flatMap(ids)).size);
    expect(tied.flatMap(ids)).toEqual(ids((await listOk(alice.token, { entity_id: alice.entityId, status: "completed" })).analyses));
  });

  it("is read by every member of the workspace, a viewer too, and by a key with the '*' scope", async () => {
    const viewer = await person(h);
    await h.http
      .post(`/api/workspaces/${alice.workspaceId}/members`)
      .set(auth(alice.token))
      .send({ user_id: viewer.userId, role: "viewer" })
      .expect(201);
    const workspace = ids((await listOk(alice.token, { workspace_id: alice.workspaceId })).analyses);
    expect(ids((await listOk(viewer.token, { workspace_id: alice.workspaceId })).analyses)).toEqual(workspace);
    expect(ids((await listOk(viewer.token, { entity_id: alice.entityId })).analyses)).toContain(onEntity);
    // Without a filter: the workspace's analyses, never Alice's own analysis of no workspace.
    expect(ids((await listOk(viewer.token)).analyses)).toEqual(workspace);

    const key = await h.http
      .post("/api/user/keys")
      .set(auth(alice.token))
      .send({ name: "all", scopes: ["*"] })
      .expect(201);
    const byKey = await h.http.get("/api/analyses").set("X-API-Key", key.body.raw_key);
    expect(byKey.status).toBe(200);
    expect(ids(byKey.body.analyses)).toEqual(ids((await listOk(alice.token)).analyses));
  });

  it("refuses an ingest-only key (403 insufficient_scope) and a request without a credential (401)", async () => {
    const key = await h.http.post("/api/user/keys").set(auth(alice.token)).send({ name: "ingest" }).expect(201);
    const res = await h.http.get("/api/analyses").set("X-API-Key", key.body.raw_key);
    expect(res.status).toBe(403);
    expect(res.body.code).toBe("insufficient_scope");
    const anonymous = await h.http.get("/api/analyses");
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers["www-authenticate"]).toMatch(/^Bearer/);
  });

  it("never lists another tenant's analyses; naming their entity, project or workspace is a 404", async () => {
    expect(ids((await listOk(bob.token)).analyses)).toEqual([bobsAnalysis]);
    for (const query of [{ entity_id: alice.entityId }, { project_id: alice.projectId }, { workspace_id: alice.workspaceId }]) {
      const res = await list(bob.token, query);
      expect(res.status, JSON.stringify(query)).toBe(404);
      expect(res.body).toMatchObject({ code: "not_found" });
      expect(JSON.stringify(res.body)).not.toContain(onEntity);
    }
    // An unknown id answers the same as another tenant's.
    const unknown = await list(bob.token, { workspace_id: randomUUID() });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual((await list(bob.token, { workspace_id: alice.workspaceId })).body);
    // Bob's own workspace named with Alice's entity: still a 404 for the entity.
    expect((await list(bob.token, { workspace_id: bob.workspaceId, entity_id: alice.entityId })).status).toBe(404);
  });

  it("a member removed from the workspace stops seeing its analyses at once, also those they started", async () => {
    const editor = await person(h);
    const added = await h.http
      .post(`/api/workspaces/${alice.workspaceId}/members`)
      .set(auth(alice.token))
      .send({ user_id: editor.userId, role: "editor" })
      .expect(201);
    const theirs = await h.deps.db.analysis.create({
      data: {
        userId: editor.userId,
        workspaceId: alice.workspaceId,
        entityId: alice.entityId,
        question: "The editor's question",
        status: "queued",
      },
    });
    expect(ids((await listOk(editor.token, { workspace_id: alice.workspaceId })).analyses)).toContain(theirs.id);
    expect(ids((await listOk(alice.token, { entity_id: alice.entityId })).analyses)).toContain(theirs.id);

    await h.http.delete(`/api/workspaces/${alice.workspaceId}/members/${added.body.id}`).set(auth(alice.token)).expect(204);
    const scopes: Record<string, string>[] = [
      { workspace_id: alice.workspaceId },
      { entity_id: alice.entityId },
      { project_id: alice.projectId },
    ];
    for (const query of scopes) {
      expect((await list(editor.token, query)).status, JSON.stringify(query)).toBe(404);
    }
    expect((await listOk(editor.token)).analyses).toEqual([]);
    await h.http.get(`/agent/v1/analysis/${theirs.id}`).set(auth(editor.token)).expect(404);
    await h.deps.db.analysis.delete({ where: { id: theirs.id } });
  });

  it("answers the 422 shape for bad query values", async () => {
    const cases: [Record<string, string>, string, string][] = [
      [{ status: "done" }, "status", "enum"],
      [{ limit: "0" }, "limit", "greater_than_equal"],
      [{ limit: "201" }, "limit", "less_than_equal"],
      [{ limit: "ten" }, "limit", "int_parsing"],
      [{ entity_id: "acme" }, "entity_id", "uuid_parsing"],
      [{ project_id: "1" }, "project_id", "uuid_parsing"],
      [{ workspace_id: "" }, "workspace_id", "uuid_parsing"],
      [{ cursor: "not-a-cursor" }, "cursor", "value_error"],
      [{ cursor: Buffer.from(JSON.stringify(["2026-01-01T00:00:00Z", "x"])).toString("base64url") }, "cursor", "value_error"],
    ];
    for (const [query, field, type] of cases) {
      const res = await list(alice.token, query);
      expect(res.status, JSON.stringify(query)).toBe(422);
      expect(res.body.detail, JSON.stringify(query)).toEqual([expect.objectContaining({ loc: ["query", field], type })]);
    }
  });

  it("is described in /openapi.json with its query parameters and answer", async () => {
    const doc = await h.http.get("/openapi.json").expect(200);
    const operation = doc.body.paths["/api/analyses"]?.get;
    expect(operation).toBeDefined();
    expect(operation.parameters.map((p: { name: string }) => p.name).sort()).toEqual(
      ["cursor", "entity_id", "limit", "project_id", "status", "workspace_id"].sort(),
    );
    expect(Object.keys(operation.responses)).toEqual(expect.arrayContaining(["200", "404", "422"]));
    expect(operation.security).toEqual([{ userBearer: [] }, { apiKey: ["*"] }]);
  });
});
