import { audit } from "../../access/workspaces/audit.js";
import type { Db, DbTx } from "../../platform/db.js";
import { deleteOriginals, emptyCounts, retryingTransaction } from "./cascade.js";
import { type Pace, restAfter } from "./pace.js";

/**
 * Draining an author erasure: its item list (the author's originals found when it was recorded) is
 * deleted in batches, each batch one transaction that locks the erasure row, deletes the originals
 * with their comments (cascade.ts), removes them from the list and adds to the erasure's counters.
 * The batch that empties the list marks the erasure completed and writes the audit entry with the
 * totals. Run by the request for small erasures and by `erasure.run.v1` otherwise; concurrent runners
 * take turns on the row lock, and a stopped one leaves a list the next run resumes.
 */
interface ErasureRow {
  id: string;
  workspace_id: string;
  platform: string;
  status: string;
  requested_by: string | null;
}

interface Totals {
  originals_matched: number;
  rows_deleted: number;
  opinion_units_deleted: number;
  analyses_updated: number;
  knowledge_citations_cleared: number;
  batches: number;
}

/**
 * Runs the erasure to its end; answers whether it completed (false: it was not running). The job rests
 * between batches (`pace`, pace.ts); the request's small erasure does not.
 */
export async function runErasure(db: Db, erasureId: string, batchSize: number, pace: Pace = { factor: 0 }): Promise<boolean> {
  for (;;) {
    const started = performance.now();
    const outcome = await batchWithRetry(db, erasureId, batchSize);
    if (outcome !== "more") return outcome === "completed";
    await restAfter(pace, performance.now() - started);
  }
}

async function batchWithRetry(db: Db, erasureId: string, batchSize: number): Promise<"more" | "completed" | "idle"> {
  return retryingTransaction(db, (tx) => runBatch(tx, erasureId, batchSize));
}

async function runBatch(tx: DbTx, erasureId: string, batchSize: number): Promise<"more" | "completed" | "idle"> {
  const [erasure] = await tx.$queryRaw<ErasureRow[]>`
    SELECT id, workspace_id, platform, status, requested_by FROM author_erasures WHERE id = ${erasureId}::uuid FOR UPDATE`;
  if (erasure?.status !== "running") return "idle";
  const batch = await tx.$queryRaw<{ content_id: string }[]>`
    SELECT content_id FROM author_erasure_items WHERE erasure_id = ${erasureId}::uuid ORDER BY content_id LIMIT ${batchSize}`;
  const ids = batch.map((b) => b.content_id);
  const counts =
    ids.length === 0
      ? emptyCounts()
      : (
          await deleteOriginals(tx, {
            workspaceId: erasure.workspace_id,
            rootIds: ids,
            reason: "author_erased",
            actorId: erasure.requested_by,
            erasureId,
          })
        ).counts;
  if (ids.length > 0) {
    await tx.$executeRaw`DELETE FROM author_erasure_items WHERE erasure_id = ${erasureId}::uuid AND content_id = ANY(${ids}::uuid[])`;
  }
  const [{ left } = { left: false }] = await tx.$queryRaw<{ left: boolean }[]>`
    SELECT EXISTS (SELECT 1 FROM author_erasure_items WHERE erasure_id = ${erasureId}::uuid) AS left`;
  const [totals] = await tx.$queryRaw<Totals[]>`
    UPDATE author_erasures SET
      rows_deleted = rows_deleted + ${counts.rows},
      opinion_units_deleted = opinion_units_deleted + ${counts.opinion_units},
      analyses_updated = analyses_updated + ${counts.analyses_updated},
      knowledge_citations_cleared = knowledge_citations_cleared + ${counts.knowledge_citations_cleared},
      batches = batches + ${ids.length > 0 ? 1 : 0},
      status = ${left ? "running" : "completed"},
      finished_at = ${left ? null : new Date()}::timestamptz,
      error = NULL,
      updated_at = clock_timestamp()
    WHERE id = ${erasureId}::uuid
    RETURNING originals_matched, rows_deleted, opinion_units_deleted, analyses_updated, knowledge_citations_cleared, batches`;
  if (left) return "more";
  await audit(tx, erasure.workspace_id, erasure.requested_by, "author.erased", erasureId, {
    erasure_id: erasureId,
    platform: erasure.platform,
    ...totals,
  });
  return "completed";
}

/** After the job's last attempt failed: the erasure says so; posting it again resumes it. */
export async function markErasureFailed(db: Db, erasureId: string, error: Error): Promise<void> {
  await db.$executeRaw`
    UPDATE author_erasures SET status = 'failed', error = ${error.message.slice(0, 2000)}, updated_at = clock_timestamp()
    WHERE id = ${erasureId}::uuid AND status = 'running'`;
}
