import type { DbTx } from "../../platform/db.js";
import { byDedupKey, type PlannedRow } from "./plan.js";

/**
 * Set-based writes of one batch inside the caller's transaction: one multi-row INSERT
 * per kind (sources, then comments) with ON CONFLICT DO NOTHING, then one SELECT for the
 * ids of rows that already existed. The unique index on (entity_id, dedup_key) settles
 * races: a concurrent transaction inserting the same key waits for ours and then finds
 * the row. Rows are inserted in dedup-key order so two batches sharing keys take their
 * index locks in the same order and cannot deadlock each other. Rows that already existed are
 * key-share locked, so an original being deleted meanwhile (src/governance/deletion) is either still there
 * when this batch commits (its comments land before the deletion collects them) or gone, and
 * then inserted again as a new original. Callers leave out the items of erased authors
 * (`erasedAuthors`, src/intake/ingest/erased-authors.ts) before calling.
 */
export interface RunFields {
  collectionRunId: string | null;
  collectionScope: string | null;
  coverageState: string | null;
}

export interface WriteResult {
  /** dedup key → row id, for every key of the batch. */
  ids: Map<string, string>;
  /** Keys whose rows this statement created. */
  inserted: Set<string>;
}

interface KeyedId {
  id: string;
  dedup_key: string;
}

export async function insertRows(
  tx: DbTx,
  entity: { id: string; workspaceId: string },
  kind: "source" | "comment",
  rows: (PlannedRow & { parent_id: string | null })[],
  run: RunFields,
): Promise<WriteResult> {
  const ids = new Map<string, string>();
  const inserted = new Set<string>();
  if (rows.length === 0) return { ids, inserted };

  const created = await insert(tx, entity, kind, rows, run);
  for (const row of created) {
    ids.set(row.dedup_key, row.id);
    inserted.add(row.dedup_key);
  }

  // A new statement, so a new snapshot: rows committed by a concurrent batch are visible. A row
  // deleted after the insert saw it is missing here: its item is inserted again (a new original).
  for (let pass = 0; pass < 3; pass++) {
    const missing = rows.map((r) => r.dedup_key).filter((key) => !ids.has(key));
    if (missing.length === 0) break;
    const existing = await tx.$queryRaw<KeyedId[]>`
      SELECT id, dedup_key FROM content_store
      WHERE entity_id = ${entity.id}::uuid AND dedup_key = ANY(${missing}::text[])
      ORDER BY dedup_key FOR KEY SHARE`;
    for (const row of existing) ids.set(row.dedup_key, row.id);
    const gone = rows.filter((r) => !ids.has(r.dedup_key));
    if (gone.length === 0) break;
    const again = await insert(tx, entity, kind, gone, run);
    for (const row of again) {
      ids.set(row.dedup_key, row.id);
      inserted.add(row.dedup_key);
    }
  }
  const unresolved = rows.find((r) => !ids.has(r.dedup_key));
  if (unresolved) throw new Error(`ingest: no row for dedup key ${unresolved.dedup_key} after insert`);
  return { ids, inserted };
}

async function insert(
  tx: DbTx,
  entity: { id: string; workspaceId: string },
  kind: "source" | "comment",
  rows: (PlannedRow & { parent_id: string | null })[],
  run: RunFields,
): Promise<KeyedId[]> {
  // Sorted here rather than in SQL (json_to_recordset yields rows in array order), so the
  // database never sorts whole rows with their contents.
  const sorted = [...rows].sort(byDedupKey);
  const payload = JSON.stringify(sorted.map(({ parent_key: _unused, ...row }) => row));
  return tx.$queryRaw<KeyedId[]>`
    INSERT INTO content_store (
      id, entity_id, workspace_id, parent_id, kind, platform, external_id, url, title, content, author,
      published_at, engagement, metadata, collection_run_id, collection_scope, coverage_state, content_hash, dedup_key
    )
    SELECT gen_random_uuid(), ${entity.id}::uuid, ${entity.workspaceId}::uuid, r.parent_id, ${kind}::text, r.platform,
      r.external_id, r.url, r.title, r.content, r.author, r.published_at, coalesce(r.engagement, '{}'::jsonb), r.metadata,
      ${run.collectionRunId}::text, ${run.collectionScope}::text, ${run.coverageState}::text, r.content_hash, r.dedup_key
    FROM json_to_recordset(${payload}::json) AS r(
      parent_id uuid, platform text, external_id text, url text, title text, content text, author text,
      published_at timestamptz, engagement jsonb, metadata jsonb, content_hash text, dedup_key text
    )
    ON CONFLICT (entity_id, dedup_key) DO NOTHING
    RETURNING id, dedup_key`;
}
