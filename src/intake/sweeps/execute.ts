import type { EmbeddingProvider } from "../../insights/embed/provider.js";
import { queueTrackerKinds, trackerMemoryOf } from "../../insights/enrichment/kind-adaptation.js";
import { enrichContent } from "../../insights/enrichment/service.js";
import { JobCancelled, watchJob } from "../../jobs/cancellation.js";
import { type EndedJob, endedWith } from "../../jobs/lifecycle.js";
import type { JobDeps } from "../../jobs/registry.js";
import { type Db, Prisma } from "../../platform/db.js";
import type { AppDeps } from "../../platform/deps.js";
import { emptyStatistics, type SweepStatistics } from "./schemas.js";

type ExecuteDeps = JobDeps & Pick<AppDeps, "pubsub" | "pool">;

/**
 * The worker side of evidence capture (`sweep.run.v1`): enrich the run's originals page by
 * page with the same `enrichContent` the enrichment queue runs, saving the cursor and the
 * statistics after every page. A retried job continues after the cursor, so every original is
 * counted once; `enrichContent` is idempotent, so an original the enrichment queue (or a run
 * that lost its job) finished first is counted as already enriched, never twice.
 *
 * The run's originals: the entity's originals stored up to the cutoff that were not enriched with
 * the current model when the run was created (unenriched, enriched since the cutoff, or with
 * another model), and those stored with `collection_run_id` equal to the run's key whatever their
 * state (the agent client stores its evidence under the id it then captures with, and the
 * enrichment queue may have finished them first).
 *
 * A run is a job kind of the shared lifecycle (`sweep_run`): a cancel stops it at the next page (what
 * it enriched stays), and its end (completed, failed, cancelled) is announced like every job's.
 */
export const SWEEP_PAGE = 500;

interface Claimed {
  entity_id: string;
  cutoff: Date;
  cursor_created_at: Date | null;
  cursor_id: string | null;
  statistics: Partial<SweepStatistics>;
}

export async function executeSweep(deps: ExecuteDeps, embedder: EmbeddingProvider, runId: string): Promise<SweepStatistics | null> {
  const cancel = watchJob(deps, "sweep_run", runId, "The evidence capture run");
  try {
    return await runPages(deps, embedder, runId, cancel.checkpoint);
  } catch (err) {
    if (err instanceof JobCancelled || cancel.signal.aborted) return null;
    throw err;
  } finally {
    cancel.stop();
  }
}

async function runPages(deps: ExecuteDeps, embedder: EmbeddingProvider, runId: string, checkpoint: () => void) {
  const { db } = deps;
  const claimed = await db.$queryRaw<Claimed[]>`
    UPDATE sweep_runs SET status = 'running', attempts = attempts + 1, started_at = coalesce(started_at, clock_timestamp()),
      updated_at = clock_timestamp()
    WHERE id = ${runId}::uuid AND status IN ('queued', 'running')
    RETURNING entity_id, cutoff, cursor_created_at, cursor_id, statistics`;
  const run = claimed[0];
  if (!run) return null;
  const model = embedder.model;
  const stats: SweepStatistics = { ...emptyStatistics(), ...run.statistics, embedding_model: model };
  // The run's originals (`c`, stored by its cutoff) with their enrichment (`e`), and those it enriches.
  const runRows = Prisma.sql`sweep_runs r JOIN content_store c ON c.entity_id = r.entity_id
    LEFT JOIN content_enrichment e ON e.content_id = c.id
    WHERE r.id = ${runId}::uuid AND c.created_at <= r.cutoff`;
  const toEnrich = Prisma.sql`(e.enriched_at IS NULL OR e.enriched_at >= r.cutoff OR e.embedding_model IS DISTINCT FROM ${model}
    OR c.collection_run_id = r.idempotency_key)`;

  if (stats.originals === null) {
    const counted = await db.$queryRaw<{ n: number }[]>`SELECT count(*)::int AS n FROM ${runRows} AND ${toEnrich}`;
    stats.originals = counted[0]?.n ?? 0;
    await save(db, runId, stats, run.cursor_created_at, run.cursor_id);
  }

  let cursor = { createdAt: run.cursor_created_at, id: run.cursor_id };
  for (;;) {
    checkpoint();
    const page = await db.$queryRaw<{ id: string; created_at: Date }[]>`
      SELECT c.id, c.created_at FROM ${runRows} AND ${toEnrich}
        AND (${cursor.createdAt}::timestamptz IS NULL OR (c.created_at, c.id) > (${cursor.createdAt}::timestamptz, ${cursor.id}::uuid))
      ORDER BY c.created_at, c.id
      LIMIT ${SWEEP_PAGE}`;
    if (page.length === 0) break;
    const ids = page.map((r) => r.id);
    const result = await enrichContent(deps.pool, embedder, ids);
    if (result.enriched > 0) await queueTrackerKinds({ ...deps, memory: trackerMemoryOf(deps) }, ids);
    stats.enriched += result.enriched;
    stats.already_enriched += result.alreadyEnriched;
    stats.missing += result.missing;
    stats.opinion_units_inserted += result.unitsInserted;
    const last = page[page.length - 1] as { id: string; created_at: Date };
    cursor = { createdAt: last.created_at, id: last.id };
    await save(db, runId, stats, cursor.createdAt, cursor.id);
    if (page.length < SWEEP_PAGE) break;
  }

  const left = await db.$queryRaw<{ n: number }[]>`
    SELECT count(*)::int AS n FROM ${runRows} AND (e.enriched_at IS NULL OR e.embedding_model IS DISTINCT FROM ${model})`;
  stats.remaining = left[0]?.n ?? 0;
  const completed = await db.$executeRaw`
    UPDATE sweep_runs SET status = 'completed', statistics = ${JSON.stringify(stats)}::jsonb, finished_at = clock_timestamp(),
      updated_at = clock_timestamp(), error = NULL
    WHERE id = ${runId}::uuid AND status = 'running'`;
  return endedWith(
    stats,
    completed > 0 ? { kind: "sweep_run", id: runId, status: "completed", data: { entity_id: run.entity_id, statistics: stats } } : null,
  );
}

async function save(db: Db, runId: string, stats: SweepStatistics, cursorCreatedAt: Date | null, cursorId: string | null) {
  await db.$executeRaw`
    UPDATE sweep_runs SET statistics = ${JSON.stringify(stats)}::jsonb, cursor_created_at = ${cursorCreatedAt}::timestamptz,
      cursor_id = ${cursorId}::uuid, updated_at = clock_timestamp()
    WHERE id = ${runId}::uuid AND status = 'running'`;
}

/** Marks a run failed after its job's last attempt (a run that ended otherwise meanwhile stays as it ended); answers the end it wrote. */
export async function markSweepFailed(deps: JobDeps, runId: string, error: Error): Promise<EndedJob | null> {
  const failed = await deps.db.$queryRaw<{ entity_id: string }[]>`
    UPDATE sweep_runs SET status = 'failed', error = ${error.message.slice(0, 2000)}, finished_at = clock_timestamp(),
      updated_at = clock_timestamp()
    WHERE id = ${runId}::uuid AND status IN ('queued', 'running')
    RETURNING entity_id`;
  const row = failed[0];
  return row ? { kind: "sweep_run", id: runId, status: "failed", data: { entity_id: row.entity_id, error: error.message } } : null;
}
