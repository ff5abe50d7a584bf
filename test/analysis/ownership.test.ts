import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import path from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashShareToken } from "../../src/delivery/share/links.js";
import { runAdminCommand } from "../../src/governance/admin/commands.js";
import { MIGRATIONS_DIR } from "../../src/platform/migrate.js";
import { analysisProcessor } from "../../workers/analysis.js";
import { createHarness, type Harness } from "../helpers/harness.js";
import { connect } from "../mcp/support.js";
import { type Listening, listen as listenRaw } from "../reliability/support/http.js";
import { person } from "../workspaces/support.js";
import { CORPUS } from "./corpus.js";
import { createTenant, storeSources, type Tenant } from "./fixtures.js";
import { listen, openStream } from "./sse-client.js";

/**
 * Whose an analysis is. Its scope is resolved, when it is requested, to the workspace whose stored
 * originals it reads, however it names it (an entity, a project, only content ids, or nothing at all):
 * the caller must be an editor there (a viewer gets 403 and nothing is stored), and the analysis
 * belongs to that workspace, so its admins list and revoke its share links, and a member who leaves
 * reads it no more. A scope that spans several workspaces is refused (400 scope_required).
 */
let h: Harness;
let base: string;
let closeServer: () => Promise<void>;
let raw: Listening;
let alice: Tenant;
let ids: string[];
let viewer: { token: string; userId: string };
let editor: { token: string; userId: string };
const auth = (token: string) => ({ Authorization: `Bearer ${token}` });

beforeAll(async () => {
  h = await createHarness({ SSE_HEARTBEAT_MS: "200" });
  ({ baseUrl: base, close: closeServer } = await listen(h));
  raw = await listenRaw(h.app);
  h.startWorkers({ "analysis.run.v1": analysisProcessor });
  alice = await createTenant(h, "Acme");
  ids = await storeSources(h, alice, CORPUS);
  viewer = await person(h);
  editor = await person(h);
  for (const [who, role] of [
    [viewer, "viewer"],
    [editor, "editor"],
  ] as const) {
    await h.http
      .post(`/api/workspaces/${alice.workspaceId}/members`)
      .set(auth(alice.token))
      .send({ user_id: who.userId, role })
      .expect(201);
  }
}, 60_000);
afterAll(async () => {
  await raw?.close();
  await closeServer?.();
  await h?.close();
});

const run = (token: string, body: Record<string, unknown>) => h.http.post("/agent/v1/analysis/run").set(auth(token)).send(body);

async function analyse(token: string, body: Record<string, unknown>) {
  const stream = await openStream(`${base}/agent/v1/analysis/run`, { method: "POST", token, body });
  expect(stream.status).toBe(200);
  await stream.closed;
  const last = stream.events.at(-1);
  expect(last?.event).toBe("result");
  return last?.data as { analysis_id: string; status: string; data: { evidence: { content_id: string; quote: string }[] } };
}

describe("a viewer", () => {
  it("may not analyse the workspace by naming no scope, only content ids or a project (403), and stores nothing", async () => {
    const question = "What do users think about pricing?";
    for (const body of [
      { question },
      { question, search_mode: "knowledge" },
      { question, provided_sources: ids.slice(0, 3).map((content_id) => ({ content_id })) },
      { question, project_id: alice.projectId },
      { question, entity_id: alice.entityId },
      { question, request_id: randomUUID() },
    ]) {
      const res = await run(viewer.token, body);
      expect(res.status, `${JSON.stringify(body)}: ${res.text}`).toBe(403);
      expect(res.body).toMatchObject({ code: "forbidden", detail: expect.stringMatching(/viewer/) });
    }
    expect(await h.deps.db.analysis.count({ where: { userId: viewer.userId } })).toBe(0);
  });

  it("is refused the same over MCP's analyze without a scope or with content ids", async () => {
    const connected = await connect(raw.url, { bearer: viewer.token });
    try {
      for (const args of [{ question: "pricing" }, { question: "pricing", content_ids: ids.slice(0, 2) }]) {
        const answer = await connected.client.callTool({ name: "analyze", arguments: args });
        expect(answer.isError, JSON.stringify(answer)).toBe(true);
        expect(answer.structuredContent).toMatchObject({ status: 403, code: "forbidden" });
      }
    } finally {
      await connected.close();
    }
    expect(await h.deps.db.analysis.count({ where: { userId: viewer.userId } })).toBe(0);
  });
});

describe("an editor's analysis of no scope", () => {
  it("belongs to the workspace it reads: its admins list and revoke its links, and the editor reads it no more once removed", async () => {
    const result = await analyse(editor.token, { question: "What do users think about pricing?" });
    expect(["completed", "partial"]).toContain(result.status);
    for (const e of result.data.evidence) expect(ids).toContain(e.content_id);
    const row = await h.deps.db.analysis.findUniqueOrThrow({ where: { id: result.analysis_id } });
    expect(row).toMatchObject({ userId: editor.userId, workspaceId: alice.workspaceId, entityId: null, projectId: null });

    // Only content ids: the workspace of those rows.
    const provided = await analyse(editor.token, {
      question: "pricing",
      provided_sources: ids.slice(0, 4).map((content_id) => ({ content_id })),
    });
    expect((await h.deps.db.analysis.findUniqueOrThrow({ where: { id: provided.analysis_id } })).workspaceId).toBe(alice.workspaceId);

    // The editor shares it; the link is the workspace's, so its owner lists and revokes it.
    const shared = await h.http
      .post("/api/share-links")
      .set(auth(editor.token))
      .send({ resource: "analysis", id: result.analysis_id })
      .expect(201);
    expect(shared.body.workspace_id).toBe(alice.workspaceId);
    const listed = await h.http
      .get(`/api/share-links?workspace_id=${alice.workspaceId}&resource=analysis`)
      .set(auth(alice.token))
      .expect(200);
    expect(listed.body.links.map((l: { id: string }) => l.id)).toContain(shared.body.id);
    const page = new URL(shared.body.url).pathname;
    expect((await h.http.get(page)).status).toBe(200);
    await h.http.delete(`/api/share-links/${shared.body.id}`).set(auth(alice.token)).expect(204);
    expect((await h.http.get(page)).status).toBe(404);
    // The editor's membership did not make a personal workspace for the analysis.
    expect(await h.deps.db.workspaceMember.count({ where: { userId: editor.userId } })).toBe(1);

    // An insight whose evidence names no entity is stored without one (src/insights/analysis/runner.ts); the
    // raw export lists it to the analysis's workspace.
    const unplaced = await h.deps.db.entityInsight.create({
      data: { analysisId: result.analysis_id, entityId: null, title: "Pricing (unplaced)", summary: "An insight of no entity." },
    });
    const editorSub = (await h.deps.db.user.findUniqueOrThrow({ where: { id: editor.userId } })).sub;
    await runAdminCommand(h.deps, ["enable-raw-export", editorSub]);
    const exportKey = await h.http
      .post("/api/user/keys")
      .set(auth(editor.token))
      .send({ name: "export", scopes: ["export"] })
      .expect(201);
    const exported = async () => {
      const res = await h.http.get("/agent/v1/export/table/entity_insights").set("X-API-Key", exportKey.body.raw_key).expect(200);
      return (res.body.rows as { id: string }[]).map((r) => r.id);
    };
    expect(await exported()).toContain(unplaced.id);

    // Removed from the workspace, the editor reads neither the analysis nor its stream, nor shares it.
    const membership = await h.deps.db.workspaceMember.findUniqueOrThrow({
      where: { workspaceId_userId: { workspaceId: alice.workspaceId, userId: editor.userId } },
    });
    await h.http.delete(`/api/workspaces/${alice.workspaceId}/members/${membership.id}`).set(auth(alice.token)).expect(204);
    for (const path of [`/agent/v1/analysis/${result.analysis_id}`, `/agent/v1/analysis/${result.analysis_id}/events`]) {
      const read = await h.http.get(path).set(auth(editor.token));
      expect(read.status, path).toBe(404);
      expect(read.body).toEqual({ detail: "Analysis was not found.", code: "not_found" });
    }
    expect(await exported()).not.toContain(unplaced.id);
    const reshare = await h.http.post("/api/share-links").set(auth(editor.token)).send({ resource: "analysis", id: result.analysis_id });
    expect(reshare.status).toBe(404);
    // The owner still reads it.
    await h.http.get(`/agent/v1/analysis/${result.analysis_id}`).set(auth(alice.token)).expect(200);
  });
});

describe("a scope over several workspaces", () => {
  it("is refused with 400 scope_required: no scope, or content ids of two workspaces; an entity's scope is served", async () => {
    const onboarded = await h.http
      .post("/api/entities/onboarding")
      .set(auth(alice.token))
      .send({ company: { name: "Globex" } })
      .expect(201);
    const second = await storeSources(h, { ...alice, entityId: onboarded.body.company.id }, CORPUS.slice(0, 3), onboarded.body.company.id);
    const before = await h.deps.db.analysis.count({ where: { userId: alice.userId } });

    for (const body of [
      { question: "pricing" },
      { question: "pricing", provided_sources: [ids[0], second[0]].map((content_id) => ({ content_id })) },
    ]) {
      const res = await run(alice.token, body);
      expect(res.status, `${JSON.stringify(body)}: ${res.text}`).toBe(400);
      expect(res.body).toMatchObject({ code: "scope_required", accepts: ["entity_id", "project_id"] });
    }
    expect(await h.deps.db.analysis.count({ where: { userId: alice.userId } })).toBe(before);

    // Named: each workspace's own analysis.
    const named = await analyse(alice.token, { question: "pricing", entity_id: alice.entityId });
    expect((await h.deps.db.analysis.findUniqueOrThrow({ where: { id: named.analysis_id } })).workspaceId).toBe(alice.workspaceId);
    const other = await analyse(alice.token, { question: "pricing", provided_sources: second.map((content_id) => ({ content_id })) });
    expect((await h.deps.db.analysis.findUniqueOrThrow({ where: { id: other.analysis_id } })).workspaceId).toBe(
      onboarded.body.workspace_id,
    );
  });
});

describe("analyses stored before every analysis had a workspace (migration 20261213090000_analysis_workspace)", () => {
  /** The migration's statements, run again on this file's database (they change only rows without a workspace). */
  async function migrateAgain() {
    const sql = readFileSync(path.join(MIGRATIONS_DIR, "20261213090000_analysis_workspace", "migration.sql"), "utf8");
    const client = new pg.Client({ connectionString: h.config.DATABASE_URL });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  }

  /** A finished analysis of no scope quoting `quoted`, as one was stored before (no workspace), with a link in `linkWorkspace`. */
  async function legacy(userId: string, quoted: string[], linkWorkspace: string) {
    const analysis = await h.deps.db.analysis.create({
      data: { userId, workspaceId: null, question: "pricing", status: "completed", result: { status: "completed", data: {} } },
    });
    let seq = 0;
    for (const contentId of quoted) {
      seq += 1;
      await h.deps.db.analysisEvent.create({
        data: { analysisId: analysis.id, seq, event: "evidence", data: { analysis_id: analysis.id, number: seq, content_id: contentId } },
      });
    }
    const link = await h.deps.db.shareLink.create({
      data: {
        workspaceId: linkWorkspace,
        resourceKind: "analysis",
        resourceId: analysis.id,
        tokenHash: hashShareToken(randomUUID()),
        createdBy: userId,
        expiresAt: new Date(Date.now() + 86_400_000),
      },
    });
    return { analysisId: analysis.id, linkId: link.id };
  }

  it("gives each the workspace it quoted and revokes links its admins could not see; an entity's analysis keeps its own", async () => {
    const starter = await person(h);
    const personal = await h.deps.db.workspace.create({ data: { name: "Personal workspace", personal: true } });
    await h.deps.db.workspaceMember.create({ data: { workspaceId: personal.id, userId: starter.userId, role: "owner" } });
    const other = await createTenant(h, "Initech");
    const elsewhere = await storeSources(h, other, CORPUS.slice(0, 2));

    const one = await legacy(starter.userId, ids.slice(0, 2), personal.id);
    const several = await legacy(starter.userId, [ids[0] as string, elsewhere[0] as string], personal.id);
    const nothing = await legacy(starter.userId, [], personal.id);
    const ofEntity = await h.deps.db.analysis.create({
      data: { userId: starter.userId, workspaceId: null, entityId: alice.entityId, question: "pricing", status: "completed" },
    });

    await migrateAgain();

    const workspaceOf = async (id: string) => (await h.deps.db.analysis.findUniqueOrThrow({ where: { id } })).workspaceId;
    const revoked = async (id: string) => (await h.deps.db.shareLink.findUniqueOrThrow({ where: { id } })).revokedAt !== null;
    expect(await workspaceOf(one.analysisId)).toBe(alice.workspaceId);
    expect(await revoked(one.linkId)).toBe(true);
    expect(await workspaceOf(several.analysisId)).toBeNull();
    expect(await revoked(several.linkId)).toBe(true);
    expect(await workspaceOf(nothing.analysisId)).toBeNull();
    expect(await revoked(nothing.linkId)).toBe(false);
    expect(await workspaceOf(ofEntity.id)).toBe(alice.workspaceId);
  });
});
