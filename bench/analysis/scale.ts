/**
 * An entity of millions of enriched originals, seeded set-based from an entity the service itself
 * stored and enriched (bench/analysis/index.ts `--scale`).
 *
 * Enriching ten million rows through the worker would take hours, so the large entity is made of
 * copies of the base entity's rows: copy k of an original gets the id md5(original id || ':' || k),
 * the original's text, title, embedding, feedback kind and opinion units (each unit pointing at its
 * copy), its publication moment moved back by (copies - 1 - k) × 3 days (so the copies overlap and
 * span about two years), and a storage moment that grows with the order of insertion, as ingest
 * makes it (the table's physical order follows created_at). Every trigger stays on, so the roll-ups,
 * count deltas and units' seen_at are what the service's own writes would have left.
 *
 * The secondary indexes of content_store, content_enrichment and opinion_units are dropped for the copy and built again
 * after it from their saved definitions (kept in bench_meta, so an interrupted seed restores them on
 * the next run).
 */
import { performance } from "node:perf_hooks";
import type pg from "pg";

const log = (line: string) => process.stdout.write(`${line}\n`);
const INDEX_KEY = "scale:dropped-indexes";
const TABLES = ["content_store", "content_enrichment", "opinion_units"];

async function savedIndexes(pool: pg.Pool): Promise<string[]> {
  const row = (await pool.query<{ value: string }>("SELECT value FROM bench_meta WHERE key = $1", [INDEX_KEY])).rows[0];
  return row ? (JSON.parse(row.value) as string[]) : [];
}

/** Builds again any index a copy dropped (also after an interrupted run). */
export async function restoreIndexes(pool: pg.Pool): Promise<void> {
  const defs = await savedIndexes(pool);
  if (defs.length === 0) return;
  const started = performance.now();
  await pool.query("SET maintenance_work_mem = '1GB'");
  for (const def of defs) {
    const t = performance.now();
    await pool.query(def.replace(/^CREATE (UNIQUE )?INDEX /, "CREATE $1INDEX IF NOT EXISTS "));
    log(`  ${def.match(/INDEX (\S+)/)?.[1]} built in ${((performance.now() - t) / 1000).toFixed(0)} s`);
  }
  await pool.query("DELETE FROM bench_meta WHERE key = $1", [INDEX_KEY]);
  log(`indexes rebuilt in ${((performance.now() - started) / 1000).toFixed(0)} s`);
}

async function dropIndexes(pool: pg.Pool): Promise<void> {
  const { rows } = await pool.query<{ name: string; def: string }>(
    `SELECT i.indexname AS name, i.indexdef AS def FROM pg_indexes i
     JOIN pg_class c ON c.relname = i.indexname JOIN pg_index x ON x.indexrelid = c.oid
     WHERE i.tablename = ANY($1::text[]) AND NOT x.indisprimary AND NOT x.indisunique`,
    [TABLES],
  );
  const defs = [...(await savedIndexes(pool)), ...rows.map((r) => r.def)];
  await pool.query("INSERT INTO bench_meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = $2", [
    INDEX_KEY,
    JSON.stringify(defs),
  ]);
  for (const r of rows) await pool.query(`DROP INDEX "${r.name}"`);
}

/**
 * Fills `targetEntity` with `copies` copies of `baseEntity`'s originals and units. Idempotent per
 * copy: a copy already stored (its first original exists) is skipped, so an interrupted seed goes on.
 */
export async function replicateEntity(pool: pg.Pool, baseEntity: string, targetEntity: string, copies: number): Promise<void> {
  const started = performance.now();
  const [{ n: baseRows }] = (
    await pool.query<{ n: number }>("SELECT count(*)::int AS n FROM content_store WHERE entity_id = $1", [baseEntity])
  ).rows as [{ n: number }];
  await dropIndexes(pool);
  const client = await pool.connect();
  try {
    await client.query("SET synchronous_commit = off");
    for (let k = 0; k < copies; k++) {
      const t = performance.now();
      const done = await client.query(
        `SELECT 1 FROM content_store WHERE id = (SELECT md5(id::text || ':' || $2::int)::uuid FROM content_store WHERE entity_id = $1 ORDER BY id LIMIT 1)`,
        [baseEntity, k],
      );
      if (done.rowCount) continue;
      await client.query("BEGIN");
      await client.query(
        `INSERT INTO content_store (id, entity_id, workspace_id, parent_id, kind, platform, external_id, url, title, content, author,
                                    published_at, engagement, metadata, content_hash, dedup_key, created_at)
         SELECT md5(c.id::text || ':' || $3::int)::uuid, $2::uuid, c.workspace_id, NULL, c.kind, c.platform, c.external_id,
                c.url || '?copy=' || $3::int, c.title, c.content, c.author,
                c.published_at - ($4::int - 1 - $3::int) * interval '3 days', c.engagement, c.metadata,
                md5(c.content_hash || ':' || $3::int), c.dedup_key || ':' || $3::int,
                timestamptz '2026-11-02' + ($3::int * $5::int + row_number() OVER (ORDER BY c.created_at, c.id)) * interval '10 ms'
         FROM content_store c WHERE c.entity_id = $1
         ORDER BY c.created_at, c.id`,
        [baseEntity, targetEntity, k, copies, baseRows],
      );
      await client.query(
        `INSERT INTO content_enrichment (content_id, entity_id, platform, created_at, embedding, embedding_model, enriched_at,
                                         feedback_kind, feedback_kind_confidence)
         SELECT c.id, c.entity_id, c.platform, c.created_at, e.embedding, e.embedding_model, e.enriched_at, e.feedback_kind,
                e.feedback_kind_confidence
         FROM content_enrichment e
           -- Each copy found by its primary key (OFFSET 0 keeps the planner from flattening it into a join that, with
           -- the copies' statistics stale until the seed's ANALYZE, walked the target entity's rows for each original).
           CROSS JOIN LATERAL (SELECT * FROM content_store c WHERE c.id = md5(e.content_id::text || ':' || $3::int)::uuid OFFSET 0) c
         WHERE e.entity_id = $1 AND c.entity_id = $2::uuid
         ORDER BY c.created_at, c.id`,
        [baseEntity, targetEntity, k],
      );
      await client.query(
        `INSERT INTO opinion_units (id, content_id, entity_id, start_offset, end_offset, text, aspect, sentiment, sentiment_label,
                                    kind, terms, compared_with, churn, analyser_version, created_at)
         SELECT gen_random_uuid(), md5(u.content_id::text || ':' || $3::int)::uuid, $2::uuid, u.start_offset, u.end_offset, u.text,
                u.aspect, u.sentiment, u.sentiment_label, u.kind, u.terms, u.compared_with, u.churn, u.analyser_version, u.created_at
         FROM opinion_units u WHERE u.entity_id = $1
         ORDER BY u.content_id, u.start_offset`,
        [baseEntity, targetEntity, k],
      );
      await client.query("COMMIT");
      log(`  copy ${k + 1} of ${copies}: ${baseRows} originals in ${((performance.now() - t) / 1000).toFixed(1)} s`);
    }
  } catch (err) {
    await client.query("ROLLBACK").catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
  log(`${copies} copies stored in ${((performance.now() - started) / 1000).toFixed(0)} s; building the indexes again`);
  await restoreIndexes(pool);
  await pool.query("VACUUM ANALYZE content_store");
  await pool.query("VACUUM ANALYZE content_enrichment");
  await pool.query("VACUUM ANALYZE opinion_units");
}
