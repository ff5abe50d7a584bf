import { randomUUID } from "node:crypto";
import { performance } from "node:perf_hooks";
import type pg from "pg";
import { generateRows, insertRows, type Row } from "../intelligence/corpus.js";

/**
 * The deletion bench's corpus (`res_bench_deletion`): a target workspace with one company holding
 * `originals` enriched originals (a fifth of them comments, opinion units as the enrichment writes them,
 * bench/intelligence/corpus.ts) and five completed analyses citing 200 of them spread over the corpus
 * (result, evidence and result events, insights with their evidence), so the cascade has rewriting to do;
 * a second workspace, the other tenants, with two companies of TENANT_ORIGINALS originals each (what the
 * load searches); and a third, the writers, with one company and no originals of its own (what the load
 * ingests into, emptied at the start of every run, so the searched corpus does not grow during a run).
 * `created_at` follows `published_at` (a year), so the tenants' and the target's rows interleave in time as
 * a shared table's would. The tenants are reused while their meta row matches; the target is reused while
 * it exists with the asked size (a run deletes it, so the next run seeds it again).
 */
export const TENANT_ORIGINALS = 50_000;
export const CITED_ORIGINALS = 200;
const ANALYSES = 5;
const CHUNK = 20_000;
const TENANTS_VERSION = "tenants-v1";
export const OWNER_SUB = "bench-deletion-owner";
export const TENANT_SUB = "bench-deletion-tenant";
export const WRITER_SUB = "bench-deletion-writer";

export interface Corpus {
  targetWorkspace: string;
  targetId: string;
  tenantWorkspace: string;
  tenantEntities: { id: string; name: string }[];
  /** The company the load ingests into (another workspace, another user). */
  writerEntityId: string;
}

const log = (line: string) => process.stdout.write(`${line}\n`);
const secondsSince = (t0: number) => `${((performance.now() - t0) / 1000).toFixed(0)} s`;

async function meta(pool: pg.Pool, key: string): Promise<string | undefined> {
  return (await pool.query<{ value: string }>("SELECT value FROM bench_meta WHERE key = $1", [key])).rows[0]?.value;
}
const setMeta = (pool: pg.Pool, key: string, value: string) =>
  pool.query("INSERT INTO bench_meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = $2", [key, value]);

const insertOne = async (client: pg.PoolClient, sql: string, params: unknown[]) =>
  (await client.query<{ id: string }>(sql, params)).rows[0]?.id as string;

async function createEntity(client: pg.PoolClient, workspaceId: string, name: string): Promise<string> {
  return insertOne(
    client,
    `INSERT INTO entities (id, workspace_id, kind, name, platforms, updated_at)
     VALUES (gen_random_uuid(), $1, 'company', $2, ARRAY['reddit','hackernews','github','web','twitter'], now()) RETURNING id::text`,
    [workspaceId, name],
  );
}

/** A workspace owned by a user of its own (created when missing). */
async function workspaceOf(client: pg.PoolClient, sub: string, name: string): Promise<string> {
  const found = await client.query<{ id: string }>(
    `SELECT m.workspace_id::text AS id FROM workspace_members m JOIN users u ON u.id = m.user_id WHERE u.sub = $1 AND m.role = 'owner' LIMIT 1`,
    [sub],
  );
  if (found.rows[0]) return found.rows[0].id;
  const userId = await insertOne(client, "INSERT INTO users (id, sub) VALUES (gen_random_uuid(), $1) RETURNING id::text", [sub]);
  const workspaceId = await insertOne(client, "INSERT INTO workspaces (id, name) VALUES (gen_random_uuid(), $1) RETURNING id::text", [
    name,
  ]);
  await client.query("INSERT INTO workspace_members (workspace_id, user_id, role) VALUES ($1, $2, 'owner')", [workspaceId, userId]);
  return workspaceId;
}

/** The search index is dropped while a large corpus is loaded and built once after (as bench/search does). */
const DROP_GIN = 'DROP INDEX IF EXISTS "content_store_search_vector_idx"';
const CREATE_GIN = 'CREATE INDEX IF NOT EXISTS "content_store_search_vector_idx" ON "content_store" USING GIN ("search_vector")';

/** Five completed analyses of the target citing `cited` (40 each), as the analysis stores them. */
async function seedAnalyses(client: pg.PoolClient, workspaceId: string, entityId: string, cited: Row[]): Promise<void> {
  const ownerId = (await client.query<{ id: string }>("SELECT id::text FROM users WHERE sub = $1", [OWNER_SUB])).rows[0]?.id;
  const per = Math.ceil(cited.length / ANALYSES);
  const aspects = ["pricing", "sync", "web clipper", "offline mode"];
  for (let a = 0; a < ANALYSES; a++) {
    const rows = cited.slice(a * per, (a + 1) * per);
    if (rows.length === 0) break;
    const analysisId = randomUUID();
    const evidence = rows.map((r, i) => {
      const unit = r.units[0];
      return {
        number: i + 1,
        content_id: r.id,
        quote: unit?.text ?? r.content.slice(0, 80),
        url: r.kind === "source" ? `https://example.com/${r.platform}/${r.id}` : "",
        platform: r.platform,
        author: `author-${r.id.slice(0, 6)}`,
        published_at: r.publishedAt,
        start_offset: unit?.start ?? 0,
        end_offset: unit?.end ?? 80,
      };
    });
    const perInsight = Math.ceil(evidence.length / aspects.length);
    const insights = aspects.map((aspect, i) => {
      const items = evidence.slice(i * perInsight, (i + 1) * perInsight);
      return {
        title: `People talk about the ${aspect}`,
        summary: `Several originals discuss the ${aspect}, for example "${items[0]?.quote ?? ""}".`,
        sentiment: i % 2 === 0 ? "negative" : "positive",
        confidence: 0.7,
        aspect,
        evidence: items,
      };
    });
    const data = {
      answer: insights.map((it, i) => `${it.title} [${i * perInsight + 1}].`).join(" "),
      citations: evidence.map((e) => ({ number: e.number, content_id: e.content_id, quote: e.quote })),
      evidence,
      insights,
      limitations: [],
    };
    const result = { status: "completed", data };
    await client.query(
      `INSERT INTO analyses (id, user_id, workspace_id, entity_id, question, depth, status, result, finished_at, event_seq)
       VALUES ($1, $2, $3, $4, $5, 'deep', 'completed', $6::jsonb, now(), $7)`,
      [
        analysisId,
        ownerId,
        workspaceId,
        entityId,
        `What do people say about the product? (${a + 1})`,
        JSON.stringify(result),
        rows.length + 1,
      ],
    );
    await client.query(
      `INSERT INTO analysis_events (analysis_id, seq, event, data)
       SELECT $1::uuid, e.seq, e.event, e.data FROM json_to_recordset($2::json) AS e(seq int, event text, data jsonb)`,
      [
        analysisId,
        JSON.stringify([
          ...evidence.map((e, i) => ({ seq: i + 1, event: "evidence", data: { analysis_id: analysisId, ...e } })),
          { seq: evidence.length + 1, event: "result", data: { analysis_id: analysisId, ...result } },
        ]),
      ],
    );
    for (const insight of insights) {
      const insightId = await insertOne(
        client,
        `INSERT INTO entity_insights (id, entity_id, analysis_id, title, summary, sentiment, confidence)
         VALUES (gen_random_uuid(), $1, $2, $3, $4, $5, $6) RETURNING id::text`,
        [entityId, analysisId, insight.title, insight.summary, insight.sentiment, insight.confidence],
      );
      await client.query(
        `INSERT INTO insight_evidence (id, insight_id, content_id, quote, start_offset, end_offset)
         SELECT gen_random_uuid(), $1::uuid, e.content_id, e.quote, e.start_offset, e.end_offset
         FROM json_to_recordset($2::json) AS e(content_id uuid, quote text, start_offset int, end_offset int)`,
        [insightId, JSON.stringify(insight.evidence)],
      );
    }
  }
}

async function seedTenants(pool: pg.Pool, reseed: boolean): Promise<Corpus["tenantEntities"]> {
  const tenantWorkspace = await pool.connect().then(async (c) => {
    try {
      return await workspaceOf(c, TENANT_SUB, "Other tenants");
    } finally {
      c.release();
    }
  });
  const names = ["Globex", "Initech"];
  const found = (
    await pool.query<{ id: string; name: string; n: string }>(
      `SELECT e.id::text, e.name, (SELECT count(*) FROM content_store c WHERE c.entity_id = e.id)::text AS n
       FROM entities e WHERE e.workspace_id = $1 ORDER BY e.name`,
      [tenantWorkspace],
    )
  ).rows;
  const seededAt = await meta(pool, "tenants");
  if (!reseed && seededAt?.startsWith(`${TENANTS_VERSION}:`) && found.length === names.length) {
    // Originals ingested by an earlier run's load go, so every run starts from the same tenants.
    const since = seededAt.slice(TENANTS_VERSION.length + 1);
    const extra = await pool.query(
      `WITH gone AS (SELECT id FROM content_store WHERE workspace_id = $1 AND created_at > $2::timestamptz),
            units AS (DELETE FROM opinion_units WHERE content_id IN (SELECT id FROM gone))
       DELETE FROM content_store WHERE id IN (SELECT id FROM gone)`,
      [tenantWorkspace, since],
    );
    log(`tenants: reusing ${names.length} x ${TENANT_ORIGINALS} originals (${extra.rowCount} ingested by an earlier run removed)`);
    return found.map((f) => ({ id: f.id, name: f.name }));
  }
  const started = performance.now();
  const client = await pool.connect();
  try {
    await client.query(
      "WITH u AS (DELETE FROM opinion_units WHERE content_id IN (SELECT id FROM content_store WHERE workspace_id = $1)) DELETE FROM content_store WHERE workspace_id = $1",
      [tenantWorkspace],
    );
    for (const table of ["opinion_rollups", "opinion_source_rollups"])
      await client.query(`DELETE FROM ${table} WHERE entity_id IN (SELECT id FROM entities WHERE workspace_id = $1)`, [tenantWorkspace]);
    await client.query("DELETE FROM entities WHERE workspace_id = $1", [tenantWorkspace]);
    await client.query(DROP_GIN);
    const entities: Corpus["tenantEntities"] = [];
    for (const [i, name] of names.entries()) {
      const id = await createEntity(client, tenantWorkspace, name);
      await insertRows(client, { id, workspaceId: tenantWorkspace }, generateRows(31 + i, TENANT_ORIGINALS, 365, name.toLowerCase()), {
        storedAtPublication: true,
      });
      entities.push({ id, name });
      log(`  seeded ${TENANT_ORIGINALS} originals of ${name} (${secondsSince(started)})`);
    }
    await client.query("SET maintenance_work_mem = '256MB'");
    await client.query(CREATE_GIN);
    await setMeta(pool, "tenants", `${TENANTS_VERSION}:${new Date().toISOString()}`);
    log(`tenants: seeded in ${secondsSince(started)}`);
    return entities;
  } finally {
    client.release();
  }
}

async function seedTarget(pool: pg.Pool, originals: number, reseed: boolean): Promise<{ workspace: string; id: string }> {
  const client = await pool.connect();
  try {
    const workspace = await workspaceOf(client, OWNER_SUB, "Target");
    const current = (
      await client.query<{ id: string; n: string; deleting: boolean }>(
        `SELECT e.id::text, (SELECT count(*) FROM content_store c WHERE c.entity_id = e.id)::text AS n,
           EXISTS (SELECT 1 FROM deletion_records d WHERE d.kind = 'entity' AND d.resource_id = e.id) AS deleting
         FROM entities e WHERE e.workspace_id = $1`,
        [workspace],
      )
    ).rows;
    const reusable = current.find((e) => Number(e.n) === originals && !e.deleting);
    if (!reseed && current.length === 1 && reusable && (await meta(pool, "target")) === `${reusable.id}:${originals}`) {
      log(`target: reusing ${originals} originals already seeded`);
      return { workspace, id: reusable.id };
    }
    const started = performance.now();
    // What an earlier run left: a target of another size, half seeded or half deleted, tombstones and deletion records.
    for (const old of current) {
      await client.query("WITH u AS (DELETE FROM opinion_units WHERE entity_id = $1) DELETE FROM content_store WHERE entity_id = $1", [
        old.id,
      ]);
      await client.query("DELETE FROM entity_insights WHERE entity_id = $1", [old.id]);
      await client.query("DELETE FROM analyses WHERE entity_id = $1", [old.id]);
      await client.query("DELETE FROM opinion_rollups WHERE entity_id = $1", [old.id]);
      await client.query("DELETE FROM opinion_source_rollups WHERE entity_id = $1", [old.id]);
      await client.query("DELETE FROM entities WHERE id = $1", [old.id]);
    }
    await client.query("TRUNCATE content_deletions");
    await client.query("DELETE FROM deletion_records WHERE workspace_id = $1", [workspace]);
    await client.query(DROP_GIN);

    const id = await createEntity(client, workspace, "Acme");
    const step = Math.max(1, Math.floor(originals / CITED_ORIGINALS));
    const cited: Row[] = [];
    for (let from = 0; from < originals; from += CHUNK) {
      const rows = generateRows(20261126 + from, Math.min(CHUNK, originals - from), 365, `acme${from / CHUNK}`);
      for (const [i, r] of rows.entries()) if ((from + i) % step === 0 && cited.length < CITED_ORIGINALS) cited.push(r);
      await insertRows(client, { id, workspaceId: workspace }, rows, { storedAtPublication: true });
      if ((from / CHUNK) % 5 === 4 || from + CHUNK >= originals)
        log(`  seeded ${Math.min(from + CHUNK, originals)} originals of the target (${secondsSince(started)})`);
    }
    await seedAnalyses(client, workspace, id, cited);
    log(`  building the GIN index on search_vector ... (${secondsSince(started)})`);
    await client.query("SET maintenance_work_mem = '256MB'");
    await client.query(CREATE_GIN);
    await client.query("VACUUM ANALYZE content_store");
    await client.query("VACUUM ANALYZE opinion_units");
    await setMeta(pool, "target", `${id}:${originals}`);
    log(`target: ${originals} originals and ${ANALYSES} analyses citing ${cited.length} of them seeded in ${secondsSince(started)}`);
    return { workspace, id };
  } finally {
    client.release();
  }
}

/** The writers' company, emptied of what an earlier run ingested. */
async function seedWriter(pool: pg.Pool): Promise<string> {
  const client = await pool.connect();
  try {
    const workspace = await workspaceOf(client, WRITER_SUB, "Writers");
    const found = await client.query<{ id: string }>("SELECT id::text FROM entities WHERE workspace_id = $1 LIMIT 1", [workspace]);
    const id = found.rows[0]?.id ?? (await createEntity(client, workspace, "Hooli"));
    const gone = await client.query(
      "WITH u AS (DELETE FROM opinion_units WHERE entity_id = $1) DELETE FROM content_store WHERE entity_id = $1",
      [id],
    );
    await client.query("DELETE FROM opinion_rollups WHERE entity_id = $1", [id]);
    await client.query("DELETE FROM opinion_source_rollups WHERE entity_id = $1", [id]);
    log(`writers: one company, ${gone.rowCount} originals an earlier run ingested removed`);
    return id;
  } finally {
    client.release();
  }
}

export async function seed(pool: pg.Pool, originals: number, reseed: boolean): Promise<Corpus> {
  await pool.query("CREATE TABLE IF NOT EXISTS bench_meta (key text PRIMARY KEY, value text NOT NULL)");
  // An earlier run stopped while seeding may have left the index dropped.
  await pool.query(CREATE_GIN);
  const tenantEntities = await seedTenants(pool, reseed);
  const writerEntityId = await seedWriter(pool);
  const target = await seedTarget(pool, originals, reseed);
  const tenantWorkspace = (
    await pool.query<{ id: string }>("SELECT workspace_id::text AS id FROM entities WHERE id = $1", [tenantEntities[0]?.id])
  ).rows[0]?.id as string;
  return { targetWorkspace: target.workspace, targetId: target.id, tenantWorkspace, tenantEntities, writerEntityId };
}
