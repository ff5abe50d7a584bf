import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { erasedAuthors } from "../../src/intake/ingest/erased-authors.js";
import { IngestRequestSchema } from "../../src/intake/ingest/schemas.js";
import { ingestContent } from "../../src/intake/ingest/service.js";
import { AppError } from "../../src/platform/errors.js";
import { createHarness, type Harness } from "../helpers/harness.js";
import { addMember, auth, createTeam, enrich, exportText, ingest, search, type Team, tablesContaining } from "./support.js";

/**
 * Forgetting an author (POST /api/workspaces/{workspace_id}/erasures): every original and comment by
 * the handle on that platform in the workspace goes as a delete would take it, only an HMAC of the
 * handle is kept, and later items of the author are skipped and counted by every store path.
 */
const MARKER = "quixplondent";
const HANDLE = "Marker_Author";

let h: Harness;
let team: Team;
let outsider: Team;
let admin: { token: string; userId: string };
let ids: Record<"erasedSource" | "replyToErased" | "otherSource" | "erasedComment" | "hnSource" | "outsiderSource", string>;

beforeAll(async () => {
  h = await createHarness();
  team = await createTeam(h);
  outsider = await createTeam(h, "Globex");
  admin = await addMember(h, team, "admin");
  const stored = await ingest(h, team.token, team.entityId, [
    {
      id: `s1-${randomUUID()}`,
      platform: "reddit",
      author: HANDLE,
      content: `My ${MARKER} workflow broke after the update and the export keeps failing.`,
      comments: [
        { id: `c1-${randomUUID()}`, author: "someone_else", text: `Your ${MARKER} setup sounds painful, the export fails for me too.` },
      ],
    },
    {
      id: `s2-${randomUUID()}`,
      platform: "reddit",
      author: "someone",
      content: "The export fails on large files.",
      comments: [{ id: `c2-${randomUUID()}`, author: " marker_author ", text: `Try the ${MARKER} trick: export in smaller parts.` }],
    },
    {
      id: `s3-${randomUUID()}`,
      platform: "hackernews",
      author: HANDLE,
      content: "On Hacker News the same handle is someone else's business.",
    },
  ]);
  const [erasedSource, otherSource, hnSource] = stored.parent_content_ids as [string, string, string];
  const [replyToErased, erasedComment] = stored.comment_content_ids as [string, string];
  const theirs = await ingest(h, outsider.token, outsider.entityId, [
    { platform: "reddit", author: HANDLE, content: "Another workspace." },
  ]);
  ids = { erasedSource, replyToErased, otherSource, erasedComment, hnSource, outsiderSource: theirs.content_ids[0] as string };
  await enrich(h, Object.values(ids));
}, 60_000);
afterAll(async () => {
  await h?.close();
});

const erase = (token: string, body: Record<string, unknown>, workspaceId = team.workspaceId) =>
  h.http.post(`/api/workspaces/${workspaceId}/erasures`).set(auth(token)).send(body);

describe("forgetting an author", () => {
  it("is an admin's: 403 below admin, 404 outside the workspace, 422 for no handle", async () => {
    const editor = await addMember(h, team, "editor");
    const viewer = await addMember(h, team, "viewer");
    const refused = await erase(editor.token, { platform: "reddit", author: HANDLE });
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe("forbidden");
    expect((await h.http.get(`/api/workspaces/${team.workspaceId}/erasures`).set(auth(viewer.token))).status).toBe(403);
    expect((await erase(outsider.token, { platform: "reddit", author: HANDLE })).status).toBe(404);
    expect((await h.http.get(`/api/workspaces/${team.workspaceId}/erasures/${randomUUID()}`).set(auth(admin.token))).status).toBe(404);
    for (const author of ["   ", "unknown", ""]) expect((await erase(admin.token, { platform: "reddit", author })).status).toBe(422);
    expect((await erase(admin.token, { platform: "myspace", author: HANDLE })).status).toBe(422);
    expect(await h.deps.db.authorErasure.count()).toBe(0);
    expect(await h.deps.db.content.count({ where: { id: { in: Object.values(ids) } } })).toBe(6);
  });

  it("deletes every original and comment by the handle on that platform, in any spelling, and keeps only a hash", async () => {
    const record = await h.http
      .post("/agent/v1/knowledge/insights")
      .set(auth(team.token))
      .send({
        entity_id: team.entityId,
        request_id: randomUUID(),
        expected_revision: 0,
        title: "Exports fail",
        summary: "Exports fail for several people.",
        evidence: [{ content_id: ids.erasedSource, quote: `My ${MARKER} workflow broke` }],
      });
    expect(record.status, JSON.stringify(record.body)).toBe(201);
    expect(await tablesContaining(h, MARKER)).toEqual(expect.arrayContaining(["content_store.content", "opinion_units.text"]));

    const res = await erase(admin.token, { platform: "reddit", author: "  marker_AUTHOR" });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({
      workspace_id: team.workspaceId,
      platform: "reddit",
      status: "completed",
      requested_by: admin.userId,
      progress: { originals_matched: 2, remaining: 0, rows_deleted: 3, batches: 1, knowledge_citations_cleared: 1 },
      next: `/api/workspaces/${team.workspaceId}/erasures/${res.body.id}`,
    });
    expect(res.body.finished_at).toEqual(expect.any(String));

    // Gone: the author's source with the reply to it, and the author's comment elsewhere; kept: the rest.
    const left = await h.deps.db.content.findMany({ where: { id: { in: Object.values(ids) } }, select: { id: true } });
    expect(left.map((r) => r.id).sort()).toEqual([ids.otherSource, ids.hnSource, ids.outsiderSource].sort());
    expect(await tablesContaining(h, MARKER)).toEqual([]);
    expect((await search(h, team.token, MARKER)).results).toEqual([]);
    expect(await exportText(h, team.token)).not.toContain(MARKER);
    // The handle is left only on the rows the erasure does not cover (another platform, another workspace).
    expect(await tablesContaining(h, "marker_author")).toEqual(["content_store.author"]);
    expect(await h.deps.db.content.count({ where: { author: { contains: "arker_", mode: "insensitive" } } })).toBe(2);
    const stored = await h.deps.db.authorErasure.findUniqueOrThrow({ where: { id: res.body.id } });
    expect(stored.authorHash).toMatch(/^[0-9a-f]{64}$/);

    const read = await h.http.get(`/agent/v1/knowledge/insights/${record.body.record.id}?entity_id=${team.entityId}`).set(auth(team.token));
    expect(read.body.resolved_evidence[0]).toMatchObject({ available: false, quote: "", unavailable: { reason: "author_erased" } });
    expect(read.body.resolved_evidence[0].unavailable.at).toEqual(expect.any(String));

    // Audited when asked and when done, with counts and without the handle.
    const audit = await h.http.get(`/api/workspaces/${team.workspaceId}/audit`).set(auth(team.token));
    const entries = (audit.body.entries as { action: string; actor_id: string; target: string; detail: Record<string, unknown> }[]).filter(
      (e) => e.action.startsWith("author."),
    );
    expect(entries.map((e) => e.action)).toEqual(["author.erased", "author.erasure_requested"]);
    for (const e of entries) expect(e).toMatchObject({ actor_id: admin.userId, target: res.body.id });
    expect(entries[0]?.detail).toMatchObject({ erasure_id: res.body.id, platform: "reddit", rows_deleted: 3, originals_matched: 2 });
    expect(JSON.stringify(audit.body).toLowerCase()).not.toContain("marker_author");

    // Read, listed, and asked again: the same erasure, nothing more to do.
    const one = await h.http.get(`/api/workspaces/${team.workspaceId}/erasures/${res.body.id}`).set(auth(admin.token));
    expect(one.body).toEqual(res.body);
    const list = await h.http.get(`/api/workspaces/${team.workspaceId}/erasures`).set(auth(admin.token));
    expect(list.body).toMatchObject({ workspace_id: team.workspaceId, count: 1, erasures: [{ id: res.body.id }] });
    const again = await erase(admin.token, { platform: "reddit", author: HANDLE });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ id: res.body.id, status: "completed", progress: { rows_deleted: 3 } });
    expect(await h.deps.db.authorErasure.count()).toBe(1);
  });

  it("skips the author's later items on that platform, counts them, and stores everyone else's", async () => {
    const res = await ingest(h, team.token, team.entityId, [
      { platform: "reddit", author: "MARKER_AUTHOR", content: "Back again.", comments: [{ author: "fan", text: "Welcome back." }] },
      {
        platform: "reddit",
        author: "someone",
        content: "A new post.",
        comments: [{ author: HANDLE, text: "My reply." }, { text: "Other." }],
      },
      { platform: "hackernews", author: HANDLE, content: "Still fine on Hacker News." },
    ]);
    expect(res).toMatchObject({ total_received: 6, skipped_erased: 3, stored: 3, inserted: 3, skipped_dedup: 0 });
    expect(res.parent_content_ids[0]).toBe("");
    expect(res.comment_content_ids.slice(0, 2)).toEqual(["", ""]);
    expect(res.content_ids).toHaveLength(3);
    expect(res.content_ids).not.toContain("");

    // The collectors' store path (the same ingest service).
    const collected = await ingestContent(
      h.deps,
      { id: team.entityId, workspaceId: team.workspaceId },
      IngestRequestSchema.parse({ sources: [{ platform: "reddit", author: HANDLE, content: "Collected by a collector." }] }),
    );
    expect(collected).toMatchObject({ skipped_erased: 1, stored: 0, content_ids: [], parent_content_ids: [""] });

    // Observations.
    const observed = await h.http
      .post("/api/observations/submit")
      .set(auth(team.token))
      .send({
        entity_id: team.entityId,
        observations: [
          { content: "Observed from the erased author.", source_platform: "reddit", metadata: { author: "marker_author" } },
          { content: "Observed from someone.", source_platform: "reddit", metadata: { author: "someone" } },
        ],
      });
    expect(observed.status, JSON.stringify(observed.body)).toBe(200);
    expect(observed.body).toMatchObject({ accepted: 2, inserted: 1, existing: 0, skipped_erased: 1 });
    expect(observed.body.observations[0]).toMatchObject({ status: "skipped_erased", id: "" });
    expect(observed.body.ids[0]).toBe("");

    const rows = await h.deps.db.content.findMany({
      where: { workspaceId: team.workspaceId, platform: "reddit" },
      select: { author: true },
    });
    expect(rows.filter((r) => r.author.trim().toLowerCase() === "marker_author")).toEqual([]);
    // Another workspace has not erased the author.
    const other = await ingest(h, outsider.token, outsider.entityId, [{ platform: "reddit", author: HANDLE, content: "Still here." }]);
    expect(other).toMatchObject({ skipped_erased: 0, stored: 1 });
  });

  it("refuses to store items it cannot check: no SECRETS_KEY, or erasures made under another one (503)", async () => {
    const check = (config: { SECRETS_KEY?: string }) =>
      h.deps.db.$transaction((tx) => erasedAuthors(tx, config, team.workspaceId, ["reddit"]));
    for (const config of [{}, { SECRETS_KEY: "another-secrets-key-0123456789" }]) {
      const err = await check(config).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(AppError);
      expect((err as AppError).code).toBe("service_unavailable");
    }
    // Platforms without erasures need no key.
    const free = await h.deps.db.$transaction((tx) => erasedAuthors(tx, {}, team.workspaceId, ["github"]));
    expect(free("github", HANDLE)).toBe(false);
  });
});
