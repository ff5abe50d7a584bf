import type { Job } from "bullmq";
import { type CancelWatch, JobCancelled, watchJob } from "../../jobs/cancellation.js";
import { isFinalAttempt } from "../../jobs/failures.js";
import { type EndedJob, endedWith } from "../../jobs/lifecycle.js";
import { groupedById, queryNamed } from "../../platform/db.js";
import type { AppDeps } from "../../platform/deps.js";
import { startAnalysis } from "./analysis.js";
import { type CollectorRegistry, defaultCollectors } from "./collectors/index.js";
import { type PlatformOutcome, type RunDeps, runPlatform } from "./platform-run.js";
import { FenceLost, isSettled, readProgress } from "./progress.js";

/**
 * The `collection.run.v1` processor. One run:
 * 1. claims the row (increments `attempts`, the fence of every later write);
 * 2. runs one collector per platform, concurrently, each from its stored cursor;
 *    platforms settled by an earlier run are skipped;
 * 3. if a platform hit a transient upstream failure, throws so BullMQ retries the job
 *    with backoff (only the unsettled platforms run again);
 * 4. otherwise starts the analysis (unless `collection_only`) and completes the row.
 * On the last attempt nothing is left to retry: failing platforms settle with their
 * error, and an error of the run itself marks the row `failed`.
 */
export interface CollectionRunOptions {
  collectors?: CollectorRegistry;
  /** How the run learns of a cancel (default: `watchJob`, the job's end channel and a slow read of its row). */
  cancel?: CancelWatch;
}

export interface CollectionRunResult {
  status: "completed" | "failed" | "skipped" | "cancelled";
  analysisId: string | null;
}

/** The entity a job collects for, as its collectors see it. */
interface ClaimedEntity {
  id: string;
  workspaceId: string;
  name: string;
  url: string;
  keywords: string[];
  collectionTargets: unknown;
}

/** The columns of a claimed job the run needs, and its entity (null when gone), read in the claiming statement itself. */
interface ClaimedJob {
  id: string;
  userId: string;
  entityId: string;
  objective: string;
  questions: string[];
  depth: string;
  platforms: string[];
  collectionOnly: boolean;
  progress: unknown;
  analysisId: string | null;
  attempts: number;
  /**
   * When the key's first attempt was created: the collection window is counted from it, so a
   * retry (a new attempt that resumes the failed one's cursors) reads the same window.
   */
  createdAt: Date;
  entity: ClaimedEntity | null;
}

/**
 * A job whose row is not there (yet). Creates write the row before the queue entry, but an entry can
 * still come first: an enqueue that reached Redis although its create saw an error (and removed its
 * row), then a retry of that create writes the row under the same queue job id. The attempt fails and
 * BullMQ retries it with the kind's backoff (2, 4, 8, 16 s), so the retried row runs; no worker slot
 * waits on it meanwhile. A row that never comes leaves a failed queue entry and nothing else.
 */
export class RowNotVisible extends Error {
  override name = "RowNotVisible";
  constructor(jobId: string) {
    super(`collection job ${jobId} has no row (yet); the attempt is retried with backoff`);
  }
}

/**
 * The claim: `attempts` + 1 (the fence of every later write), `running`, and what the run needs, with its
 * entity, in one statement, for the jobs a worker's slots claim at once (`groupedById`: the rows are locked in
 * id order, as the index hands them out).
 */
const CLAIM_SQL = `
  WITH claimed AS (
    UPDATE collection_jobs
    SET attempts = attempts + 1, status = 'running', started_at = COALESCE(started_at, now()), updated_at = now()
    WHERE id = ANY($1::uuid[]) AND status IN ('queued', 'running')
    RETURNING id, user_id, entity_id, idempotency_key, objective, questions, depth, platforms, collection_only, progress,
      analysis_id, attempts, created_at
  )
  SELECT c.id, c.user_id AS "userId", c.entity_id AS "entityId", c.objective, c.questions, c.depth, c.platforms,
    c.collection_only AS "collectionOnly", c.progress, c.analysis_id AS "analysisId", c.attempts,
    (SELECT COALESCE(min(o.created_at), c.created_at) FROM collection_jobs o
      WHERE o.user_id = c.user_id AND o.idempotency_key = c.idempotency_key) AS "createdAt",
    CASE WHEN e.id IS NULL THEN NULL ELSE json_build_object(
      'id', e.id, 'workspaceId', e.workspace_id, 'name', e.name, 'url', e.url, 'keywords', e.keywords,
      'collectionTargets', e.collection_targets
    ) END AS entity
  FROM claimed c LEFT JOIN entities e ON e.id = c.entity_id`;

const STATUS_SQL = "SELECT status FROM collection_jobs WHERE id = $1::uuid";

/** The end of a run, fenced: only the attempt that holds the row, while it runs, writes it. */
const COMPLETE_SQL = `
  UPDATE collection_jobs
  SET status = 'completed', analysis_id = $2::uuid, error = NULL, finished_at = now(), updated_at = now()
  WHERE id = $1::uuid AND attempts = $3 AND status = 'running'
  RETURNING 1 AS done`;

const FAIL_FENCED_SQL = `
  UPDATE collection_jobs SET status = 'failed', error = $2, finished_at = now(), updated_at = now()
  WHERE id = $1::uuid AND attempts = $3 AND status = 'running'
  RETURNING 1 AS done`;

async function claim(deps: RunDeps, jobId: string): Promise<ClaimedJob | "finished"> {
  // Two reads at most: a row inserted between the claim and the status read is claimed by the second.
  for (let read = 0; read < 2; read++) {
    // The claims of a process's worker slots that come at once share one statement.
    const claimed = await groupedById<ClaimedJob>(deps.pool, CLAIM_SQL)(jobId);
    if (claimed) return claimed;
    const [existing] = await queryNamed<{ status: string }>(deps.pool, STATUS_SQL, [jobId]);
    // A finished job (re-delivered, or re-added by a replayed create) is never run again
    // (an operator's requeue-job of a failed one starts a new attempt, a new job).
    if (existing && existing.status !== "queued" && existing.status !== "running") return "finished";
    if (!existing) break;
  }
  throw new RowNotVisible(jobId);
}

export async function runCollectionJob(
  deps: RunDeps,
  jobId: string,
  options: CollectionRunOptions & { finalAttempt: boolean },
): Promise<CollectionRunResult> {
  const claimed = await claim(deps, jobId);
  if (claimed === "finished") return { status: "skipped", analysisId: null };
  const row = claimed;
  const fence = row.attempts;

  const entity = row.entity;
  if (!entity) {
    const error = "the entity no longer exists";
    const failed = await queryNamed(deps.pool, FAIL_FENCED_SQL, [jobId, error, fence]);
    const ended: EndedJob = { kind: "collection_job", id: jobId, status: "failed", data: { error } };
    return endedWith({ status: "failed", analysisId: null }, failed.length > 0 ? ended : null);
  }
  const cancel = options.cancel ?? watchJob(deps, "collection_job", jobId, "The collection job");
  try {
    return await collect(deps, row, entity, { ...options, cancel });
  } catch (err) {
    if (err instanceof JobCancelled || cancel.signal.aborted) return { status: "cancelled", analysisId: row.analysisId };
    throw err;
  } finally {
    if (!options.cancel) cancel.stop();
  }
}

async function collect(
  deps: RunDeps,
  row: ClaimedJob,
  entity: ClaimedEntity,
  options: CollectionRunOptions & { finalAttempt: boolean; cancel: CancelWatch },
): Promise<CollectionRunResult> {
  const jobId = row.id;
  const fence = row.attempts;

  const progress = readProgress(row.progress, row.platforms);
  const unsettled = row.platforms.filter((platform) => {
    const p = progress[platform];
    return p !== undefined && !isSettled(p);
  });
  // One platform to run and no analysis to start: its settle completes the job (one statement less).
  const completesOnSettle = unsettled.length === 1 && (row.collectionOnly || row.analysisId !== null);
  const job = {
    id: row.id,
    fence,
    depth: row.depth === "deep" ? ("deep" as const) : ("brief" as const),
    objective: row.objective,
    questions: row.questions,
    createdAt: row.createdAt,
    finalAttempt: options.finalAttempt,
    cancel: options.cancel,
    completesOnSettle,
  };
  const collectorEntity = {
    id: entity.id,
    workspaceId: entity.workspaceId,
    name: entity.name,
    url: entity.url,
    keywords: entity.keywords,
    collectionTargets: entity.collectionTargets,
  };
  const collectors = options.collectors ?? defaultCollectors;
  const results = await Promise.allSettled(
    row.platforms.map(async (platform): Promise<PlatformOutcome> => {
      const p = progress[platform];
      if (!p || isSettled(p)) return "settled";
      return runPlatform(deps, job, collectorEntity, platform, p, collectors);
    }),
  );
  const failure = results.find((r): r is PromiseRejectedResult => r.status === "rejected");
  if (failure) throw failure.reason;
  const retrying = row.platforms.filter((_, i) => (results[i] as PromiseFulfilledResult<PlatformOutcome>).value === "retry");
  if (retrying.length > 0) {
    throw new Error(`transient upstream failures on ${retrying.join(", ")}; the job is retried with backoff`);
  }
  if (completesOnSettle) {
    const ended: EndedJob = { kind: "collection_job", id: jobId, status: "completed", data: endedData(row.entityId, row.analysisId) };
    return endedWith({ status: "completed", analysisId: row.analysisId }, ended);
  }

  let analysisId = row.analysisId;
  if (!row.collectionOnly && !analysisId) {
    // A cancelled job starts no analysis. (Completing needs no read first: the completion below
    // is fenced by status = 'running', so a cancelled row stays cancelled and the run ends so.)
    await options.cancel.check();
    analysisId = await startAnalysis(deps, row);
  }
  const done = await queryNamed(deps.pool, COMPLETE_SQL, [jobId, analysisId, fence]);
  if (done.length === 0) {
    await options.cancel.check();
    throw new FenceLost(jobId);
  }
  return endedWith(
    { status: "completed", analysisId },
    { kind: "collection_job", id: jobId, status: "completed", data: endedData(row.entityId, analysisId) },
  );
}

const endedData = (entityId: string, analysisId: string | null, error?: string) => ({
  entity_id: entityId,
  analysis_id: analysisId,
  ...(error ? { error } : {}),
});

/** Marks a job failed after its last attempt (a run that lost its fence leaves the row alone); answers the end it wrote. */
export async function markFailed(deps: RunDeps, jobId: string, error: Error): Promise<EndedJob | null> {
  if (error instanceof FenceLost) return null;
  const message = error.message.slice(0, 2000);
  const rows = await deps.db.$queryRaw<{ entity_id: string; analysis_id: string | null }[]>`
    UPDATE collection_jobs SET status = 'failed', error = ${message}, finished_at = now(), updated_at = now()
    WHERE id = ${jobId}::uuid AND status IN ('queued', 'running')
    RETURNING entity_id, analysis_id`;
  const failed = rows[0];
  return failed
    ? { kind: "collection_job", id: jobId, status: "failed", data: endedData(failed.entity_id, failed.analysis_id, message) }
    : null;
}

/**
 * Builds the processor; tests and the queue benchmark pass their own collectors. The worker runtime
 * calls `onLastFailure` when an attempt fails and none will follow.
 */
export function collectionProcessor(options: CollectionRunOptions = {}) {
  const run = async (payload: { jobId: string }, ctx: { deps: AppDeps; job: Job }) =>
    runCollectionJob(ctx.deps, payload.jobId, { ...options, finalAttempt: isFinalAttempt(ctx.job) });
  return Object.assign(run, {
    onLastFailure: (payload: { jobId: string }, err: Error, ctx: { deps: AppDeps }) => markFailed(ctx.deps, payload.jobId, err),
  });
}
