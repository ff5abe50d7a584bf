import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { COUNT_BASIS, IngestRequestSchema } from "../../src/intake/ingest/schemas.js";
import { ingestContent } from "../../src/intake/ingest/service.js";
import { bearer, comment, countRows, createEntityFor, createKeyFor, source } from "../helpers/evidence.js";
import { createHarness, type Harness } from "../helpers/harness.js";

let h: Harness;
let token: string;
beforeAll(async () => {
  h = await createHarness();
  token = await h.token();
});
afterAll(() => h.close());

const ingest = (body: Record<string, unknown>, auth = bearer(token)) => h.http.post("/agent/v1/ingest/content").set(auth).send(body);

async function enrichmentJobIds(): Promise<string[]> {
  const jobs = await h.deps.queues.get("enrichment").getJobs(["waiting", "delayed", "active", "completed", "failed"]);
  return jobs.flatMap((j) => (j.data as { contentIds: string[] }).contentIds);
}

describe("POST /agent/v1/ingest/content", () => {
  it("stores sources and comments as their own rows, keeping every field and the run fields", async () => {
    const entity = await createEntityFor(h, token);
    const res = await ingest({
      entity_id: entity.id,
      collection_run_id: "run-1",
      collection_scope: "subreddit:acme",
      coverage_state: "sampled",
      sources: [
        source(1, { metadata: { transcript: true }, comments: [comment(1, { url: "https://example.com/c/1", metadata: { depth: 1 } })] }),
      ],
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      inserted: 2,
      skipped_dedup: 0,
      skipped_irrelevant: 0,
      skipped_erased: 0,
      total_received: 2,
      stored: 2,
      content_ids: [res.body.parent_content_ids[0], res.body.comment_content_ids[0]],
      parent_content_ids: [expect.any(String)],
      comment_content_ids: [expect.any(String)],
      comments_received: 1,
      comments_inserted: 1,
      complete: true,
      count_basis: COUNT_BASIS,
    });

    const [parentId] = res.body.parent_content_ids as string[];
    const [commentId] = res.body.comment_content_ids as string[];
    const parent = await h.deps.db.content.findUniqueOrThrow({ where: { id: parentId }, include: { enrichment: true } });
    expect(parent).toMatchObject({
      entityId: entity.id,
      workspaceId: entity.workspace_id,
      parentId: null,
      kind: "source",
      platform: "reddit",
      externalId: "post-1",
      url: "https://example.com/posts/1",
      title: "Post 1",
      author: "author-1",
      engagement: { likes: 1, comments: 2 },
      metadata: { transcript: true },
      collectionRunId: "run-1",
      collectionScope: "subreddit:acme",
      coverageState: "sampled",
      // Not enriched yet: nothing of it in content_enrichment.
      enrichment: null,
    });
    expect(parent.content).toBe(source(1).content);
    expect(parent.publishedAt?.toISOString()).toBe("2026-01-02T03:04:05.000Z");
    expect(parent.contentHash).toMatch(/^[0-9a-f]{64}$/);
    const child = await h.deps.db.content.findUniqueOrThrow({ where: { id: commentId } });
    expect(child).toMatchObject({
      parentId,
      kind: "comment",
      platform: "reddit",
      externalId: "comment-1",
      url: "https://example.com/c/1",
      content: comment(1).text,
      author: "commenter-1",
      engagement: { likes: 1, replies: 0 },
      metadata: { depth: 1 },
      collectionRunId: "run-1",
      coverageState: "sampled",
    });
    // The full-text vector is written with the row.
    const [vector] = await h.deps.db.$queryRaw<{ matches: boolean }[]>`
      SELECT search_vector @@ plainto_tsquery('english', 'onboarding confusing') AS matches FROM content_store WHERE id = ${parentId}::uuid`;
    expect(vector?.matches).toBe(true);
  });

  it("applies the spec's defaults and reads null optional fields as absent", async () => {
    const entity = await createEntityFor(h, token);
    const res = await ingest({
      entity_id: entity.id,
      collection_run_id: null,
      coverage_state: null,
      sources: [
        {
          platform: "web",
          content: "Plain page text.",
          id: null,
          published_at: null,
          engagement: null,
          metadata: null,
          unknown_field: "ignored",
          comments: [{ text: "A reply", url: null, likes: null }],
        },
      ],
    });
    expect(res.status).toBe(200);
    const row = await h.deps.db.content.findUniqueOrThrow({ where: { id: res.body.parent_content_ids[0] } });
    expect(row).toMatchObject({ title: "", url: "", author: "", externalId: null, metadata: null, engagement: {}, collectionRunId: null });
    const reply = await h.deps.db.content.findUniqueOrThrow({ where: { id: res.body.comment_content_ids[0] } });
    expect(reply).toMatchObject({ author: "unknown", url: "", engagement: {} });
  });

  it("counts new, reused, in-batch duplicate and comment rows exactly, with ids in request order", async () => {
    const entity = await createEntityFor(h, token);
    const first = await ingest({ entity_id: entity.id, sources: [source(1, { comments: [comment(1)] }), source(2)] });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({
      inserted: 3,
      skipped_dedup: 0,
      total_received: 3,
      stored: 3,
      comments_received: 1,
      comments_inserted: 1,
    });
    const [id1, id2] = first.body.parent_content_ids as string[];

    // source 2 again (reused), source 3 new, source 3 again in the same batch, source 1 with
    // its known comment (reused) and a new one, plus a repeat of the new comment.
    const second = await ingest({
      entity_id: entity.id,
      sources: [source(2), source(3), source(3), source(1, { comments: [comment(1), comment(2), comment(2)] })],
    });
    expect(second.status).toBe(200);
    expect(second.body).toMatchObject({
      inserted: 2, // source 3, comment 2
      skipped_dedup: 5, // source 2 (stored), source 3 (repeat), source 1 (stored), comment 1 (stored), comment 2 (repeat)
      total_received: 7,
      stored: 7,
      comments_received: 3,
      comments_inserted: 1,
    });
    const parents = second.body.parent_content_ids as string[];
    expect(parents[0]).toBe(id2);
    expect(parents[1]).toBe(parents[2]);
    expect(parents[3]).toBe(id1);
    const comments = second.body.comment_content_ids as string[];
    expect(comments[0]).toBe(first.body.comment_content_ids[0]);
    expect(comments[1]).toBe(comments[2]);
    expect(second.body.content_ids).toEqual([...parents, ...comments]);
    expect(await countRows(h, entity.id)).toEqual({ sources: 3, comments: 2 });
    const newComment = await h.deps.db.content.findUniqueOrThrow({ where: { id: comments[1] } });
    expect(newComment.parentId).toBe(id1);
  });

  it("dedups by platform + id, else normalised url, else content hash", async () => {
    const entity = await createEntityFor(h, token);
    const batch = {
      entity_id: entity.id,
      sources: [
        { platform: "hackernews", id: "42", content: "first text" },
        { platform: "hackernews", id: "42", content: "different text, same id" },
        { platform: "reddit", id: "42", content: "same id on another platform" },
        { platform: "web", url: "https://www.Example.com/a/?utm_source=x&b=2&a=1#top", content: "page" },
        { platform: "web", url: "http://example.com/a?a=1&b=2", content: "same page, other spelling" },
        { platform: "web", content: "no id, no url" },
        { platform: "web", content: "no id, no url" },
        { platform: "web", content: "no id, no url, other text" },
      ],
    };
    const res = await ingest(batch);
    expect(res.status).toBe(200);
    const ids = res.body.parent_content_ids as string[];
    expect(ids[1]).toBe(ids[0]);
    expect(ids[2]).not.toBe(ids[0]);
    expect(ids[4]).toBe(ids[3]);
    expect(ids[6]).toBe(ids[5]);
    expect(ids[7]).not.toBe(ids[5]);
    expect(res.body.inserted).toBe(5);
    expect(res.body.skipped_dedup).toBe(3);

    // Comments dedup under their parent: the same comment id under another parent is another row.
    const withComments = await ingest({
      entity_id: entity.id,
      sources: [
        { platform: "web", content: "parent A", comments: [{ id: "c1", text: "x" }] },
        { platform: "web", content: "parent B", comments: [{ id: "c1", text: "x" }, { text: "same text" }, { text: "same text" }] },
      ],
    });
    expect(withComments.body.comments_inserted).toBe(3);
    expect(withComments.body.skipped_dedup).toBe(1);

    // The same original for another entity is that entity's own row.
    const other = await createEntityFor(h, token, { name: "Other" });
    const elsewhere = await ingest({ ...batch, entity_id: other.id });
    expect(elsewhere.body.inserted).toBe(5);
    expect(elsewhere.body.parent_content_ids[0]).not.toBe(ids[0]);
  });

  it("queues the new rows, and only those, for enrichment after commit", async () => {
    const entity = await createEntityFor(h, token);
    const first = await ingest({ entity_id: entity.id, sources: [source(10, { comments: [comment(10)] })] });
    const queued = await enrichmentJobIds();
    expect(queued).toEqual(expect.arrayContaining(first.body.content_ids));

    const again = await ingest({ entity_id: entity.id, sources: [source(10, { comments: [comment(10)] }), source(11)] });
    const newId = again.body.parent_content_ids[1] as string;
    const after = await enrichmentJobIds();
    expect(after.filter((id) => id === newId)).toHaveLength(1);
    expect(after.filter((id) => first.body.content_ids.includes(id))).toHaveLength(2);
  });

  it("queues more than 5000 new rows as several jobs of at most 5000 ids", async () => {
    const entity = await createEntityFor(h, token);
    const comments = Array.from({ length: 5200 }, (_, i) => ({ id: `c${i}`, text: `comment ${i}` }));
    const res = await ingest({ entity_id: entity.id, sources: [{ platform: "web", content: "a thread with many replies", comments }] });
    expect(res.body.inserted).toBe(5201);
    const jobs = await h.deps.queues.get("enrichment").getJobs(["waiting", "delayed", "active", "completed", "failed"]);
    const mine = jobs
      .map((j) => (j.data as { contentIds: string[] }).contentIds)
      .filter((ids) => ids.some((id) => res.body.content_ids.includes(id)));
    expect(mine.map((ids) => ids.length).sort((a, b) => a - b)).toEqual([201, 5000]);
    expect(new Set(mine.flat())).toEqual(new Set(res.body.content_ids));
  });

  it("stores collector input PostgreSQL cannot hold (NUL, unpaired surrogates) instead of failing the batch", async () => {
    // HTTP input with such text is refused by validation; collectors call the service directly.
    const entity = await createEntityFor(h, token);
    const request = IngestRequestSchema.parse({
      sources: [
        { platform: "web", content: "x\u0000y \ud800 z", metadata: { k: "v\u0000", s: "\udc00" }, comments: [{ text: "c\u0000d" }] },
      ],
    });
    const result = await ingestContent(h.deps, { id: entity.id, workspaceId: entity.workspace_id }, request);
    expect(result.inserted).toBe(2);
    const stored = await h.deps.db.content.findUniqueOrThrow({ where: { id: result.parent_content_ids[0] } });
    expect(stored.content).toBe("xy \ufffd z");
    expect(stored.metadata).toEqual({ k: "v", s: "\ufffd" });
    const reply = await h.deps.db.content.findUniqueOrThrow({ where: { id: result.comment_content_ids[0] } });
    expect(reply.content).toBe("cd");
  });

  it("stores text outside ASCII and JSON's special characters byte for byte", async () => {
    const entity = await createEntityFor(h, token);
    const content = 'Ünïcödé 日本語の本文 😀👩🏽‍💻 — "quoted" \\ back\\slash \\u0041 {"json": [1]} tab\there\nnew line\r\n\u2028\u2029 end';
    const title = 'Título: 🚀 "launch" \\ notes';
    const text = 'réponse 👍 \\n is not a newline "ok"';
    const metadata = { "clé ✓": ["値", { nested: 'a"b\\c' }], emoji: "🎉" };
    const res = await ingest({
      entity_id: entity.id,
      sources: [{ platform: "web", title, content, author: "Zoë 🌱", metadata, comments: [{ text, author: "李" }] }],
    });
    expect(res.status).toBe(200);
    const stored = await h.deps.db.content.findUniqueOrThrow({ where: { id: res.body.parent_content_ids[0] } });
    expect(stored.content).toBe(content);
    expect(stored.title).toBe(title);
    expect(stored.author).toBe("Zoë 🌱");
    expect(stored.metadata).toEqual(metadata);
    const reply = await h.deps.db.content.findUniqueOrThrow({ where: { id: res.body.comment_content_ids[0] } });
    expect(reply.content).toBe(text);
    expect(reply.author).toBe("李");
  });

  it("answers 404 for a non-uuid, unknown or invisible entity, after validation", async () => {
    const mine = await createEntityFor(h, token);
    const stranger = await h.token();
    const batch = { sources: [source(1)] };
    expect((await ingest({ ...batch, entity_id: "not-a-uuid" })).status).toBe(404);
    expect((await ingest({ ...batch, entity_id: "00000000-0000-4000-8000-000000000000" })).status).toBe(404);
    const invisible = await ingest({ ...batch, entity_id: mine.id }, bearer(stranger));
    expect(invisible.status).toBe(404);
    expect(invisible.body).toEqual({ detail: "Entity was not found.", code: "not_found" });
    // Validation comes first: a bad body with an unknown entity is a 422.
    expect((await ingest({ entity_id: "not-a-uuid", sources: [] })).status).toBe(422);
    expect(await countRows(h, mine.id)).toEqual({ sources: 0, comments: 0 });
  });

  it("accepts a bearer or a key with ingest or *, and refuses export-only keys and missing credentials", async () => {
    const entity = await createEntityFor(h, token);
    const ingestKey = await createKeyFor(h, token, ["ingest"]);
    const fullKey = await createKeyFor(h, token, ["*"]);
    const exportKey = await createKeyFor(h, token, ["export"]);
    const body = { entity_id: entity.id, sources: [source(1)] };
    expect((await ingest(body, { Authorization: `Bearer ${ingestKey.raw_key}` })).status).toBe(200);
    expect((await ingest(body, { "X-API-Key": fullKey.raw_key } as never)).status).toBe(200);
    const refused = await ingest(body, { Authorization: `Bearer ${exportKey.raw_key}` });
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe("insufficient_scope");
    const anonymous = await h.http.post("/agent/v1/ingest/content").send(body);
    expect(anonymous.status).toBe(401);
  });
});
