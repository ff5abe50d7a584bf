import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { forgetDeletedCitations } from "../../src/insights/analysis/deletions.js";
import { createBulkEmbedder, type EmbeddingProvider } from "../../src/insights/embed/provider.js";
import { enrichContent } from "../../src/insights/enrichment/service.js";
import { analysisProcessor } from "../../workers/analysis.js";
import { listen, openStream } from "../analysis/sse-client.js";
import { createHarness, type Harness } from "../helpers/harness.js";
import { addMember, auth, createTeam, enrich, exportText, ingest, search, type Team, tablesContaining } from "./support.js";

/**
 * Deleting one stored original (DELETE /agent/v1/content/{content_id}): the original, its comment
 * and the reply below that go with everything derived from them, proven by searching every text
 * column of the database for a word only they held; what quoted them (an analysis, a knowledge
 * record) keeps its own text and shows each such citation unavailable, with why and when.
 */
const MARKER = "zorbleflux";

let h: Harness;
let team: Team;
let base: string;
let closeServer: () => Promise<void>;
let ids: { source: string; comment: string; reply: string; kept: string; other: string };

beforeAll(async () => {
  h = await createHarness();
  ({ baseUrl: base, close: closeServer } = await listen(h));
  h.startWorkers({ "analysis.run.v1": analysisProcessor });
  team = await createTeam(h);
  const stored = await ingest(h, team.token, team.entityId, [
    {
      id: `src-${randomUUID()}`,
      platform: "reddit",
      title: `Why the ${MARKER} export fails`,
      url: `https://reddit.example.com/r/acme/${MARKER}`,
      author: "alice_writes",
      content: `The ${MARKER} export keeps crashing and I lose my edits every time. The ${MARKER} is terrible. Support never answered my ticket.`,
      comments: [
        {
          id: `c-${randomUUID()}`,
          author: "bob_replies",
          text: `Same here, the ${MARKER} sync is painfully slow and the app freezes. The ${MARKER} is awful.`,
        },
      ],
    },
    {
      id: `kept-${randomUUID()}`,
      platform: "reddit",
      author: "carol",
      content: "The export keeps crashing on large files. Very frustrating, and support was slow to answer.",
    },
    { id: `other-${randomUUID()}`, platform: "hackernews", author: "dave", content: "Sync is slow but the editor is great and fast." },
  ]);
  const [source, kept, other] = stored.parent_content_ids as [string, string, string];
  const comment = stored.comment_content_ids[0] as string;
  // A reply to the comment (ingest stores one level of comments; deeper threads arrive this way from collectors).
  const reply = randomUUID();
  await h.deps.db.$executeRaw`
    INSERT INTO content_store (id, entity_id, workspace_id, parent_id, kind, platform, content, author, content_hash, dedup_key)
    VALUES (${reply}::uuid, ${team.entityId}::uuid, ${team.workspaceId}::uuid, ${comment}::uuid, 'comment', 'reddit',
      ${`A reply: ${MARKER} is broken for me too, it keeps crashing.`}, 'erin', 'h', ${`reply-${reply}`})`;
  ids = { source, comment, reply, kept, other };
  await enrich(h, [source, comment, reply, kept, other]);
}, 60_000);
afterAll(async () => {
  await closeServer?.();
  await h?.close();
});

async function runAnalysis(): Promise<{ analysis_id: string; data: { evidence: { content_id: string; quote: string }[] } }> {
  const stream = await openStream(`${base}/agent/v1/analysis/run`, {
    method: "POST",
    token: team.token,
    body: {
      question: "What do people complain about?",
      entity_id: team.entityId,
      provided_sources: [ids.source, ids.comment, ids.reply, ids.kept, ids.other].map((content_id) => ({ content_id })),
    },
  });
  expect(stream.status).toBe(200);
  await stream.closed;
  const last = stream.events.at(-1);
  expect(last?.event, JSON.stringify(last)).toBe("result");
  return last?.data as never;
}

async function createRecord(): Promise<string> {
  const res = await h.http
    .post("/agent/v1/knowledge/insights")
    .set(auth(team.token))
    .send({
      entity_id: team.entityId,
      request_id: randomUUID(),
      expected_revision: 0,
      title: "Exports crash",
      summary: "Several people report crashing exports.",
      evidence: [
        { content_id: ids.source, quote: `The ${MARKER} export keeps crashing` },
        { content_id: ids.kept, quote: "The export keeps crashing on large files" },
      ],
    });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.record.id;
}

describe("DELETE /agent/v1/content/{content_id}", () => {
  it("refuses a viewer (403) and a non-member (404), and deletes nothing then", async () => {
    const viewer = await addMember(h, team, "viewer");
    const refused = await h.http.delete(`/agent/v1/content/${ids.other}`).set(auth(viewer.token));
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe("forbidden");
    const outsider = await createTeam(h, "Globex");
    const hidden = await h.http.delete(`/agent/v1/content/${ids.other}`).set(auth(outsider.token));
    expect(hidden.status).toBe(404);
    expect(hidden.body.code).toBe("not_found");
    // Another tenant's id answers exactly what an unknown id answers: nothing says the id exists.
    const unknown = await h.http.delete(`/agent/v1/content/${randomUUID()}`).set(auth(outsider.token));
    expect(hidden.body).toEqual(unknown.body);
    expect(hidden.body).toEqual({ detail: "Content was not found.", code: "not_found" });
    expect((await h.http.delete(`/agent/v1/content/${randomUUID()}`).set(auth(team.token))).status).toBe(404);
    expect((await h.http.delete("/agent/v1/content/not-a-uuid").set(auth(team.token))).status).toBe(404);
    expect(await h.deps.db.content.count({ where: { id: ids.other } })).toBe(1);
  });

  it("removes the original, its comments and every copy of their words; citations stay, unavailable", async () => {
    const recordId = await createRecord();
    const analysis = await runAnalysis();
    expect(analysis.data.evidence.some((e) => [ids.source, ids.comment, ids.reply].includes(e.content_id))).toBe(true);
    const deleted = { contentId: { in: [ids.source, ids.comment, ids.reply] } };
    expect(await h.deps.db.contentEnrichment.count({ where: deleted })).toBe(3);
    // An action derived from the generated record about the word (its title starts as the record's).
    const generated = await h.deps.db.knowledgeInsight.findFirstOrThrow({ where: { title: { contains: MARKER, mode: "insensitive" } } });
    const action = await h.http
      .post("/api/sweeps/objects")
      .set(auth(team.token))
      .send({ entity_id: team.entityId, insight_id: generated.id, object_type: "pain_point" });
    expect(action.status, JSON.stringify(action.body)).toBe(201);
    // The proof's control: before the delete the word is in the originals and in what was derived from them.
    // The analysis named a theme after the word, so its insight and generated record carry it too.
    const before = await tablesContaining(h, MARKER);
    expect(before).toEqual(
      expect.arrayContaining(["content_store.content", "content_store.search_vector", "opinion_units.text", "opinion_rollups.aspect"]),
    );
    expect(before).toEqual(
      expect.arrayContaining(["analyses.result", "analysis_events.data", "insight_evidence.quote", "entity_insights.title"]),
    );
    expect(before).toEqual(
      expect.arrayContaining(["knowledge_source_revisions.text", "knowledge_revision_evidence.quote", "knowledge_write_requests.receipt"]),
    );
    expect(before).toEqual(expect.arrayContaining(["knowledge_insight_revisions.title", "knowledge_changes.title", "actions.title"]));
    expect((await search(h, team.token, MARKER)).results.length).toBeGreaterThan(0);
    expect(await exportText(h, team.token)).toContain(MARKER);

    const editor = await addMember(h, team, "editor");
    const key = await h.http
      .post("/api/user/keys")
      .set(auth(editor.token))
      .send({ name: "ingest", scopes: ["ingest"] });
    const res = await h.http.delete(`/agent/v1/content/${ids.source}`).set("X-API-Key", key.body.raw_key);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({
      content_id: ids.source,
      deleted: true,
      reason: "deleted",
      entity_id: team.entityId,
      kind: "source",
      platform: "reddit",
      removed: { rows: 3, originals: 1, comments: 2, analyses_updated: 1 },
    });
    for (const count of ["opinion_units", "knowledge_snapshots_cleared", "knowledge_citations_cleared", "generated_text_rewritten"])
      expect(res.body.removed[count], count).toBeGreaterThan(0);
    const deletedAt = res.body.deleted_at as string;

    // No table holds the word, no search finds it, no export returns it.
    expect(await tablesContaining(h, MARKER)).toEqual([]);
    expect(await tablesContaining(h, "alice_writes")).toEqual([]);
    expect((await search(h, team.token, MARKER)).results).toEqual([]);
    expect(await exportText(h, team.token)).not.toContain(MARKER);
    expect(await h.deps.db.content.count({ where: { id: { in: [ids.source, ids.comment, ids.reply] } } })).toBe(0);
    expect(await h.deps.db.contentEnrichment.count({ where: deleted })).toBe(0);
    expect(await h.deps.db.content.count({ where: { id: { in: [ids.kept, ids.other] } } })).toBe(2);

    // The analysis keeps its answer and every citation; those of the deleted rows say why and when.
    const read = await h.http.get(`/agent/v1/analysis/${analysis.analysis_id}`).set(auth(team.token));
    expect(read.status).toBe(200);
    const gone = [ids.source, ids.comment, ids.reply];
    const evidence = read.body.result.data.evidence as { content_id: string; quote: string; unavailable?: unknown }[];
    expect(evidence.length).toBe(analysis.data.evidence.length);
    for (const e of evidence) {
      if (gone.includes(e.content_id))
        expect(e).toMatchObject({ quote: "", url: "", author: "", unavailable: { reason: "deleted", at: deletedAt } });
      else expect(e.unavailable).toBeUndefined();
    }
    // Its theme was named after the deleted word: the name is removed, the rest of its text kept.
    const titles = (read.body.result.data.insights as { title: string }[]).map((i) => i.title);
    expect(titles.some((t) => t.startsWith("[removed] — "))).toBe(true);
    const replay = await openStream(`${base}/agent/v1/analysis/${analysis.analysis_id}/events`, { token: team.token });
    await replay.closed;
    expect(JSON.stringify(replay.events)).not.toContain(MARKER);
    expect(replay.events.filter((e) => e.event === "evidence" && gone.includes(e.data.content_id as string))).not.toEqual([]);

    // The knowledge record keeps its text; the citation of the deleted original is unavailable, with why and when.
    const record = await h.http.get(`/agent/v1/knowledge/insights/${recordId}?entity_id=${team.entityId}`).set(auth(team.token));
    expect(record.status).toBe(200);
    expect(record.body.record).toMatchObject({ title: "Exports crash", summary: "Several people report crashing exports." });
    const [cited, other] = record.body.resolved_evidence;
    expect(cited).toMatchObject({
      content_id: ids.source,
      quote: "",
      available: false,
      span: null,
      unavailable: { reason: "deleted", at: deletedAt },
    });
    expect(other).toMatchObject({ content_id: ids.kept, available: true });
    expect(other.unavailable).toBeUndefined();
    expect(record.body.unavailable_source_ids).toEqual([cited.source_revision_id]);
    const source = await h.http
      .get(`/agent/v1/knowledge/sources/${cited.source_revision_id}?entity_id=${team.entityId}`)
      .set(auth(team.token));
    expect(source.body).toMatchObject({
      available: false,
      text: null,
      removed_at: deletedAt,
      removed_reason: "deleted",
      author: "",
      url: "",
    });

    // The audit log says who deleted what, and how many rows.
    const audit = await h.http.get(`/api/workspaces/${team.workspaceId}/audit`).set(auth(team.token));
    const entry = audit.body.entries.find((e: { action: string }) => e.action === "content.deleted");
    expect(entry).toMatchObject({ actor_id: editor.userId, target: ids.source, detail: { content_id: ids.source, rows: 3, comments: 2 } });

    // The completeness audit counts them as deleted, not as stored.
    const key2 = await h.http
      .post("/api/user/keys")
      .set(auth(team.token))
      .send({ name: "x", scopes: ["export"] });
    const audited = await h.http.get(`/agent/v1/export/completeness?entity_id=${team.entityId}`).set("X-API-Key", key2.body.raw_key);
    expect(audited.status).toBe(200);
    const reddit = audited.body.platforms.find((p: { platform: string }) => p.platform === "reddit");
    expect(reddit).toMatchObject({ rows: 1, deleted: 3, last_deleted_at: deletedAt });
    expect(audited.body.totals.deleted).toBe(3);
  }, 60_000);

  it("cites a deleted original unavailable in an analysis that stores its result afterwards", async () => {
    const stored = await ingest(h, team.token, team.entityId, [{ platform: "reddit", content: "Crashes on export, every single time." }]);
    const id = stored.content_ids[0] as string;
    const analysis = await h.deps.db.analysis.create({
      data: { userId: team.userId, workspaceId: team.workspaceId, question: "Crashes?", status: "running" },
    });
    const item = { number: 1, content_id: id, quote: "Crashes on export", url: "", platform: "reddit", author: "x" };
    await h.deps.db.analysisEvent.create({
      data: { analysisId: analysis.id, seq: 1, event: "evidence", data: { analysis_id: analysis.id, ...item } },
    });
    expect((await h.http.delete(`/agent/v1/content/${id}`).set(auth(team.token))).body.removed.analysis_events_updated).toBe(1);
    // The result, computed before the delete, is stored after it (src/insights/analysis/runner.ts does this in its transaction).
    const data = { answer: 'People say "Crashes on export" [1].', citations: [{ ...item }], evidence: [{ ...item }], insights: [] };
    const gone = await h.deps.db.$transaction((tx) => forgetDeletedCitations(tx, analysis.id, data as never));
    expect(gone).toBe(1);
    expect(data.evidence[0]).toMatchObject({ quote: "", author: "", unavailable: { reason: "deleted" } });
    expect(data.citations[0]).toMatchObject({ quote: "", unavailable: { reason: "deleted" } });
    expect(data.answer).toBe('People say "[quote removed]" [1].');
    const event = await h.deps.db.analysisEvent.findFirstOrThrow({ where: { analysisId: analysis.id } });
    expect(JSON.stringify(event.data)).not.toContain("Crashes on export");
  });

  it("leaves no opinion units of an original deleted while it was being enriched", async () => {
    const stored = await ingest(h, team.token, team.entityId, [
      { platform: "reddit", content: "The flumbergast export is broken and slow." },
    ]);
    const id = stored.content_ids[0] as string;
    const local = createBulkEmbedder(h.config);
    // The delete commits after enrichment read the row and before it writes (the embedder runs in between).
    const racing: EmbeddingProvider = {
      model: local.model,
      dimensions: local.dimensions,
      embed: async (texts) => {
        expect((await h.http.delete(`/agent/v1/content/${id}`).set(auth(team.token))).status).toBe(200);
        return local.embed(texts);
      },
    };
    expect(await enrichContent(h.deps.pool, racing, [id])).toMatchObject({ missing: 1, enriched: 0, unitsInserted: 0 });
    expect(await h.deps.db.contentEnrichment.count({ where: { contentId: id } })).toBe(0);
    expect(await tablesContaining(h, "flumbergast")).toEqual([]);
  });

  it("answers a second delete 204 with nothing removed, and deletes a comment alone", async () => {
    const again = await h.http.delete(`/agent/v1/content/${ids.source}`).set(auth(team.token));
    expect(again.status).toBe(204);
    expect(again.text).toBe("");
    const viewer = await addMember(h, team, "viewer");
    expect((await h.http.delete(`/agent/v1/content/${ids.source}`).set(auth(viewer.token))).status).toBe(403);
    const outsider = await createTeam(h, "Initech");
    expect((await h.http.delete(`/agent/v1/content/${ids.comment}`).set(auth(outsider.token))).status).toBe(404);

    const stored = await ingest(h, team.token, team.entityId, [
      {
        id: `t-${randomUUID()}`,
        platform: "reddit",
        content: "A thread.",
        comments: [{ text: "A comment to delete." }, { text: "Kept." }],
      },
    ]);
    const [first, second] = stored.comment_content_ids as [string, string];
    const res = await h.http.delete(`/agent/v1/content/${first}`).set(auth(team.token));
    expect(res.body).toMatchObject({ kind: "comment", removed: { rows: 1, originals: 1, comments: 0 } });
    expect(await h.deps.db.content.count({ where: { id: { in: [stored.parent_content_ids[0] as string, second] } } })).toBe(2);
  });

  it("deletes once under concurrent deletes, and a deleted original ingested again is a new original", async () => {
    const source = {
      id: `again-${randomUUID()}`,
      platform: "reddit",
      content: "Posted twice.",
      comments: [{ id: "c", text: "First reply." }],
    };
    const first = await ingest(h, team.token, team.entityId, [source]);
    const id = first.parent_content_ids[0] as string;
    const answers = await Promise.all([1, 2, 3].map(() => h.http.delete(`/agent/v1/content/${id}`).set(auth(team.token))));
    expect(answers.map((a) => a.status).sort()).toEqual([200, 204, 204]);
    expect(await h.deps.db.contentDeletion.count({ where: { rootId: id } })).toBe(2);
    const again = await ingest(h, team.token, team.entityId, [{ ...source, comments: [...source.comments, { id: "d", text: "Second." }] }]);
    expect(again).toMatchObject({ inserted: 3, skipped_dedup: 0 });
    expect(again.parent_content_ids[0]).not.toBe(id);
  });
});
