import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runAdminCommand } from "../../src/governance/admin/commands.js";
import { bearer, comment, createEntityFor, createKeyFor, source } from "../helpers/evidence.js";
import { createHarness, type Harness, randomId } from "../helpers/harness.js";

let h: Harness;
let key: string;
let userId: string;
let entity: { id: string; workspace_id: string; project_id: string | null };
let other: { id: string };
let contentIds: string[];
let strangerEntity: { id: string };

beforeAll(async () => {
  h = await createHarness();
  const sub = randomId("exporter-");
  const token = await h.token(sub);
  key = (await createKeyFor(h, token, ["export"])).raw_key;
  await runAdminCommand(h.deps, ["enable-raw-export", sub]);
  userId = (await h.deps.db.user.findUniqueOrThrow({ where: { sub } })).id;
  const project = await h.deps.db.project.create({
    data: { workspaceId: (await createEntityFor(h, token, { name: "Seed" })).workspace_id, name: "P" },
  });
  entity = await createEntityFor(h, token, { name: "Acme", project_id: project.id });
  other = await createEntityFor(h, token, { name: "Other" });
  const res = await h.http
    .post("/agent/v1/ingest/content")
    .set(bearer(token))
    .send({ entity_id: entity.id, collection_run_id: "run-x", sources: [source(1, { comments: [comment(1)] }), source(2), source(3)] });
  contentIds = res.body.content_ids;
  await h.http
    .post("/agent/v1/ingest/content")
    .set(bearer(token))
    .send({ entity_id: other.id, sources: [source(9)] });

  // Rows of the other exported tables, linked to the entity.
  const [first] = contentIds as [string];
  await h.deps.db.$executeRaw`
    INSERT INTO content_enrichment (content_id, entity_id, platform, created_at, embedding, embedding_model)
    SELECT id, entity_id, platform, created_at, ARRAY[0.5, -0.25, 1]::real[], 'hash-3' FROM content_store WHERE id = ${first}::uuid
    ON CONFLICT (content_id) DO UPDATE SET embedding = EXCLUDED.embedding, embedding_model = EXCLUDED.embedding_model`;
  const unit = await h.deps.db.opinionUnit.create({
    data: {
      contentId: first,
      entityId: entity.id,
      startOffset: 0,
      endOffset: 10,
      text: "Original p",
      sentiment: -0.5,
      sentimentLabel: "negative",
    },
  });
  const insight = await h.deps.db.entityInsight.create({ data: { entityId: entity.id, title: "Onboarding", summary: "Confusing" } });
  await h.deps.db.insightEvidence.create({
    data: { insightId: insight.id, contentId: first, opinionUnitId: unit.id, quote: "Original p" },
  });
  await h.deps.db.page.create({ data: { userId, projectId: project.id, path: "notes/a", title: "A", content: "page", tags: ["x"] } });
  await h.deps.db.page.create({ data: { userId, path: "notes/b", title: "B", content: "page without project" } });
  await h.deps.db.knowledge.create({
    data: {
      entityId: entity.id,
      workspaceId: entity.workspace_id,
      kind: "summary",
      platform: "meetingnotes",
      externalId: "not_1",
      content: "summary",
    },
  });

  // Another user's rows in every table.
  const strangerToken = await h.token();
  strangerEntity = await createEntityFor(h, strangerToken, { name: "Stranger" });
  const theirs = await h.http
    .post("/agent/v1/ingest/content")
    .set(bearer(strangerToken))
    .send({ entity_id: strangerEntity.id, sources: [source(1)] });
  const theirInsight = await h.deps.db.entityInsight.create({ data: { entityId: strangerEntity.id, title: "T", summary: "S" } });
  await h.deps.db.insightEvidence.create({ data: { insightId: theirInsight.id, contentId: theirs.body.content_ids[0], quote: "Orig" } });
  await h.deps.db.opinionUnit.create({
    data: { contentId: theirs.body.content_ids[0], entityId: strangerEntity.id, startOffset: 0, endOffset: 4, text: "Orig" },
  });
});
afterAll(() => h.close());

const get = (path: string) => h.http.get(path).set(bearer(key));

describe("GET /agent/v1/export/table/{table_name}", () => {
  it("answers whole content rows, snake_case, without the full-text vector, limited to the caller's workspaces", async () => {
    const res = await get("/agent/v1/export/table/content_store");
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      table: "content_store",
      count: 5,
      total: 5,
      limit: 1000,
      offset: 0,
      next_offset: null,
      next_cursor: null,
    });
    const row = res.body.rows.find((r: { id: string }) => r.id === contentIds[0]);
    const stored = await h.deps.db.content.findUniqueOrThrow({ where: { id: contentIds[0] } });
    expect(Object.keys(row).sort()).toEqual(
      [
        "id",
        "entity_id",
        "workspace_id",
        "parent_id",
        "kind",
        "feedback_kind",
        "feedback_kind_confidence",
        "platform",
        "external_id",
        "url",
        "title",
        "content",
        "author",
        "published_at",
        "engagement",
        "metadata",
        "collection_run_id",
        "collection_scope",
        "coverage_state",
        "content_hash",
        "dedup_key",
        "embedding",
        "embedding_model",
        "enriched_at",
        "created_at",
      ].sort(),
    );
    expect(row).toMatchObject({
      entity_id: entity.id,
      kind: "source",
      external_id: "post-1",
      content: stored.content,
      content_hash: stored.contentHash,
      dedup_key: stored.dedupKey,
      engagement: { likes: 1, comments: 2 },
      collection_run_id: "run-x",
      embedding: [0.5, -0.25, 1],
      embedding_model: "hash-3",
    });
    expect(Date.parse(row.published_at)).toBe(stored.publishedAt?.getTime());
    expect(Date.parse(row.created_at)).toBe(stored.createdAt.getTime());
    const commentRow = res.body.rows.find((r: { kind: string; entity_id: string }) => r.kind === "comment");
    expect(commentRow.parent_id).toBe(contentIds[0]);
    // Not enriched: the enrichment's columns are there, null.
    expect(commentRow).toMatchObject({
      embedding: null,
      embedding_model: null,
      enriched_at: null,
      feedback_kind: null,
      feedback_kind_confidence: null,
    });
    expect(res.body.rows.some((r: { entity_id: string }) => r.entity_id === strangerEntity.id)).toBe(false);
  });

  it("pages in (created_at, id) order with limit, offset and next_offset", async () => {
    const all = (await get("/agent/v1/export/table/content_store")).body.rows as { id: string; created_at: string }[];
    for (let i = 1; i < all.length; i++) {
      const [a, b] = [all[i - 1], all[i]] as [{ id: string; created_at: string }, { id: string; created_at: string }];
      expect(Date.parse(a.created_at) < Date.parse(b.created_at) || (a.created_at === b.created_at && a.id < b.id)).toBe(true);
    }
    const p1 = await get("/agent/v1/export/table/content_store?limit=2");
    expect(p1.body).toMatchObject({ count: 2, total: 5, limit: 2, offset: 0, next_offset: 2 });
    const p3 = await get("/agent/v1/export/table/content_store?limit=2&offset=4");
    expect(p3.body).toMatchObject({ count: 1, total: 5, offset: 4, next_offset: null, next_cursor: null });
    const beyond = await get("/agent/v1/export/table/content_store?offset=50");
    expect(beyond.body).toMatchObject({ count: 0, rows: [], total: 5, offset: 50, next_offset: null });
    const ids = [...p1.body.rows, ...(await get("/agent/v1/export/table/content_store?limit=2&offset=2")).body.rows, ...p3.body.rows].map(
      (r: { id: string }) => r.id,
    );
    expect(ids).toEqual(all.map((r) => r.id));
  });

  it("filters by entity_id", async () => {
    const res = await get(`/agent/v1/export/table/content_store?entity_id=${other.id}`);
    expect(res.body.total).toBe(1);
    expect(res.body.rows[0].entity_id).toBe(other.id);
    const entities = await get(`/agent/v1/export/table/entities?entity_id=${entity.id}`);
    expect(entities.body.rows).toHaveLength(1);
    expect(entities.body.rows[0]).toMatchObject({ id: entity.id, name: "Acme", kind: "company", collection_targets: {}, keywords: [] });
  });

  it("answers every allowed table, limited to what the caller may see", async () => {
    const expected: Record<string, number> = {
      entities: 3,
      content_store: 5,
      opinion_units: 1,
      entity_insights: 1,
      insight_evidence: 1,
      pages: 2,
      knowledge: 1,
    };
    for (const [name, total] of Object.entries(expected)) {
      const res = await get(`/agent/v1/export/table/${name}`);
      expect(res.status, name).toBe(200);
      expect(res.body.table).toBe(name);
      expect(res.body.total, name).toBe(total);
      for (const row of res.body.rows) expect(row).not.toHaveProperty("search_vector");
    }
    const byEntity: Record<string, number> = {
      entities: 1,
      content_store: 4,
      opinion_units: 1,
      entity_insights: 1,
      insight_evidence: 1,
      pages: 1,
      knowledge: 1,
    };
    for (const [name, total] of Object.entries(byEntity)) {
      const res = await get(`/agent/v1/export/table/${name}?entity_id=${entity.id}`);
      expect(res.body.total, name).toBe(total);
    }
    const evidence = (await get("/agent/v1/export/table/insight_evidence")).body.rows[0];
    expect(evidence).toMatchObject({ content_id: contentIds[0], quote: "Original p" });
    const page = (await get(`/agent/v1/export/table/pages?entity_id=${entity.id}`)).body.rows[0];
    expect(page).toMatchObject({ path: "notes/a", tags: ["x"], user_id: userId });
  });

  it("bounds limit to 1..5000 (default 1000) and validates offset, entity_id and cursor", async () => {
    expect((await get("/agent/v1/export/table/content_store?limit=5000")).body.limit).toBe(5000);
    expect((await get("/agent/v1/export/table/content_store?limit=1")).body.count).toBe(1);
    for (const [query, loc] of [
      ["limit=5001", "limit"],
      ["limit=0", "limit"],
      ["limit=abc", "limit"],
      ["offset=-1", "offset"],
      ["entity_id=not-a-uuid", "entity_id"],
      ["cursor=garbage", "cursor"],
    ] as const) {
      const res = await get(`/agent/v1/export/table/content_store?${query}`);
      expect(res.status, query).toBe(422);
      expect(res.body.detail[0].loc).toEqual(["query", loc]);
    }
  });
});
