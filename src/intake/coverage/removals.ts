import type { Db, DbTx } from "../../platform/db.js";
import type { RemovedAfter } from "./schemas.js";

/**
 * What a coverage record says about rows removed after its run stored them. A stored original names
 * the run that stored it (`content_store.collection_run_id`: a collection job's id, or the
 * `collection_run_id` an agent sent with its ingest), and a coverage record is one run's report on one
 * platform (`run_id`, `collector`). When originals are deleted (a delete, an author erasure, retention),
 * the deletion cascade (src/governance/deletion/cascade.ts) calls `tallyRemovals` in its transaction, before the rows
 * go: one statement per batch adds each removed row (originals and the comments below them) to the record
 * of its run on its platform, or, when that run recorded no coverage for the platform, to the run's
 * `unknown` collector record.
 *
 * Limits, by what is stored: a row names only the run that first stored it, so a later run that found it
 * again (counted `deduplicated`, and `stored` as reused) is not told; rows stored without a run id, and
 * removals before the run's record was first written, are in no record. The completeness audit's
 * `deleted` and `deleted_after_coverage` (from the tombstones) count those too.
 */
export type RemovalReason = "deleted" | "author_erased" | "retention";

export interface RemovalColumns {
  removed_deleted: number;
  removed_author_erased: number;
  removed_retention: number;
  last_removed_at: Date | null;
}

/** Adds the given content rows (before they are deleted) to their runs' coverage records; answers the records changed. */
export async function tallyRemovals(tx: DbTx, contentIds: string[], reason: RemovalReason, at: Date): Promise<number> {
  if (contentIds.length === 0) return 0;
  // The records are locked in id order, so two batches touching the same records cannot deadlock on them.
  return tx.$executeRaw`
    WITH removed AS (
      SELECT entity_id, collection_run_id AS run_id, platform, count(*)::int AS n
      FROM content_store WHERE id = ANY(${contentIds}::uuid[]) AND collection_run_id IS NOT NULL
      GROUP BY entity_id, collection_run_id, platform
    ), target AS (
      SELECT DISTINCT ON (r.entity_id, r.run_id, r.platform) cr.id, r.n
      FROM removed r JOIN coverage_records cr
        ON cr.entity_id = r.entity_id AND cr.run_id = r.run_id AND cr.collector IN (r.platform, 'unknown')
      ORDER BY r.entity_id, r.run_id, r.platform, cr.collector = 'unknown'
    ), locked AS MATERIALIZED (
      SELECT cr.id, t.n FROM coverage_records cr
      JOIN (SELECT id, sum(n)::int AS n FROM target GROUP BY id) t ON t.id = cr.id
      ORDER BY cr.id FOR UPDATE OF cr
    )
    UPDATE coverage_records cr SET
      removed_deleted = cr.removed_deleted + CASE WHEN ${reason}::text = 'deleted' THEN l.n ELSE 0 END,
      removed_author_erased = cr.removed_author_erased + CASE WHEN ${reason}::text = 'author_erased' THEN l.n ELSE 0 END,
      removed_retention = cr.removed_retention + CASE WHEN ${reason}::text = 'retention' THEN l.n ELSE 0 END,
      last_removed_at = GREATEST(cr.last_removed_at, ${at}::timestamptz)
    FROM locked l WHERE cr.id = l.id`;
}

/** The API's shape of a record's removal columns. */
export function removedAfter(row: RemovalColumns): RemovedAfter {
  const deleted = row.removed_deleted;
  const erased = row.removed_author_erased;
  const retention = row.removed_retention;
  return {
    rows: deleted + erased + retention,
    deleted,
    author_erased: erased,
    retention,
    last_removed_at: row.last_removed_at?.toISOString() ?? null,
  };
}

/** Sums several records' removals (the latest removal of any of them). */
export function sumRemovedAfter(items: RemovedAfter[]): RemovedAfter {
  const sum = (f: (r: RemovedAfter) => number) => items.reduce((acc, r) => acc + f(r), 0);
  const last = items.reduce<string | null>(
    (max, r) => (r.last_removed_at && (!max || r.last_removed_at > max) ? r.last_removed_at : max),
    null,
  );
  return {
    rows: sum((r) => r.rows),
    deleted: sum((r) => r.deleted),
    author_erased: sum((r) => r.author_erased),
    retention: sum((r) => r.retention),
    last_removed_at: last,
  };
}

/** The removals of one run's coverage records, by collector (e.g. a collection job's platforms). */
export async function removalsOfRun(db: Db | DbTx, entityId: string, runId: string): Promise<Map<string, RemovedAfter>> {
  const rows = await db.$queryRaw<(RemovalColumns & { collector: string })[]>`
    SELECT collector, removed_deleted, removed_author_erased, removed_retention, last_removed_at
    FROM coverage_records WHERE entity_id = ${entityId}::uuid AND run_id = ${runId}`;
  return new Map(rows.map((r) => [r.collector, removedAfter(r)]));
}
