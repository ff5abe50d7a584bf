import { entityForUser, isUuid } from "../../access/workspaces/access.js";
import type { CollectionJob } from "../../generated/prisma/client.js";
import { attemptOf } from "../../jobs/attempts.js";
import type { AppDeps } from "../../platform/deps.js";
import { notFound } from "../../platform/errors.js";
import { removalsOfRun } from "../coverage/removals.js";
import type { RemovedAfter } from "../coverage/schemas.js";
import { readProgress } from "./progress.js";
import type { JobStatusResponse, StoredJobStatus } from "./schemas.js";
import { type JobRoute, jobUrl } from "./service.js";

/**
 * The read model of a collection job. Postgres is the truth; the queue is consulted
 * only to notice a job the queue has lost: a row still `queued` or `running` whose
 * BullMQ entry is missing (Redis was flushed or lost data) or finished without the
 * row being finished answers `stalled` until an operator re-enqueues it
 * (`npm run admin -- requeue-stalled`). When Redis cannot be asked, the stored status
 * is answered as it is.
 */
export type QueueState = "waiting" | "active" | "delayed" | "prioritized" | "waiting-children" | "completed" | "failed" | "unknown";

const QUEUE_LOOKUP_TIMEOUT_MS = 500;

/** The BullMQ state of a job's queue entry, or undefined when Redis does not answer. */
export async function queueStateOf(deps: Pick<AppDeps, "queues">, queueJobId: string): Promise<QueueState | undefined> {
  if (deps.queues.connection.status !== "ready") return undefined;
  let timer: NodeJS.Timeout | undefined;
  try {
    return (await Promise.race([
      deps.queues.get("collection").getJobState(queueJobId),
      new Promise<undefined>((resolve) => {
        timer = setTimeout(() => resolve(undefined), QUEUE_LOOKUP_TIMEOUT_MS);
      }),
    ])) as QueueState | undefined;
  } catch {
    return undefined;
  } finally {
    clearTimeout(timer);
  }
}

/** Why a row that is not finished has no live queue entry, or null when it has one. */
export function stalledReason(status: string, queueState: QueueState | undefined): string | null {
  if (status !== "queued" && status !== "running") return null;
  if (queueState === undefined) return null;
  if (queueState === "unknown") return "the job queue has no entry for this job (Redis lost it); an operator can re-enqueue it";
  if (queueState === "failed") return "the job queue gave up on this job before it finished; an operator can re-enqueue it";
  if (queueState === "completed") return "the job queue finished this job without it completing; an operator can re-enqueue it";
  return null;
}

export async function findJobForUser(deps: Pick<AppDeps, "db">, userId: string, jobId: string): Promise<CollectionJob> {
  if (!isUuid(jobId)) throw notFound("Collection job");
  const row = await deps.db.collectionJob.findUnique({ where: { id: jobId } });
  if (!row) throw notFound("Collection job");
  // The job is its workspace's: members of the entity's (active) workspace follow it, whoever started it, and
  // its starter only while a member: one who left reads it no more, as her analyses, runs and syncs.
  await entityForUser(deps.db, userId, row.entityId).catch(() => {
    throw notFound("Collection job");
  });
  return row;
}

export async function collectionJobStatus(
  deps: Pick<AppDeps, "db" | "queues" | "config">,
  userId: string,
  jobId: string,
): Promise<JobStatusResponse> {
  const row = await findJobForUser(deps, userId, jobId);
  const live = row.status === "queued" || row.status === "running";
  const [queueState, removals] = await Promise.all([
    live ? queueStateOf(deps, row.queueJobId) : undefined,
    removalsOfRun(deps.db, row.entityId, row.id),
  ]);
  const reason = live ? stalledReason(row.status, queueState) : null;
  return describeJob(deps.config, row, reason, removals);
}

/**
 * `removals`: what the job's coverage records (one per settled platform) tallied of the rows it stored
 * and that were removed afterwards (src/intake/coverage/removals.ts), by platform.
 */
export function describeJob(
  config: AppDeps["config"],
  row: CollectionJob,
  stalled: string | null,
  removals: Map<string, RemovedAfter> = new Map(),
): JobStatusResponse {
  const progress = readProgress(row.progress, row.platforms);
  const counts = { found: 0, stored: 0, inserted: 0, deduplicated: 0, removed: 0 };
  const errors: JobStatusResponse["errors"] = [];
  const publicProgress: JobStatusResponse["progress"] = {};
  const coverage: JobStatusResponse["coverage"] = {};
  for (const [platform, p] of Object.entries(progress)) {
    counts.found += p.found;
    counts.stored += p.stored;
    counts.inserted += p.inserted;
    counts.deduplicated += p.deduplicated;
    const removed = removals.get(platform) ?? null;
    counts.removed += removed?.rows ?? 0;
    coverage[platform] = p.coverage_state;
    // Every platform that did not run as asked is in `errors`: its failure, or why it is blocked
    // (no collector, no credentials, nothing to fetch).
    if (p.error) errors.push({ platform, detail: p.error });
    else if (p.coverage_state === "blocked" && p.reason) errors.push({ platform, detail: p.reason });
    publicProgress[platform] = {
      status: p.status,
      coverage_state: p.coverage_state,
      reason: p.reason,
      error: p.error,
      pages: p.pages,
      found: p.found,
      stored: p.stored,
      inserted: p.inserted,
      deduplicated: p.deduplicated,
      cursor: p.cursor,
      reached_end: p.reached_end,
      query: p.query,
      started_at: p.started_at,
      finished_at: p.finished_at,
      removed_after: removed,
    };
  }
  if (row.error) errors.push({ platform: null, detail: row.error });

  const route = row.route as JobRoute;
  const finished = row.status === "completed" || row.status === "failed";
  const next = finished && row.analysisId ? analysisUrl(config, row.analysisId) : jobUrl(config, route, row.id);
  return {
    job_id: row.id,
    status: stalled ? "stalled" : (row.status as StoredJobStatus),
    stalled_reason: stalled,
    entity_id: row.entityId,
    route,
    objective: row.objective,
    questions: row.questions,
    depth: row.depth,
    collection_only: row.collectionOnly,
    platforms: row.platforms,
    progress: publicProgress,
    counts,
    coverage,
    errors,
    analysis_id: row.analysisId ?? "",
    next,
    attempts: row.attempts,
    ...attemptOf(row),
    created_at: row.createdAt.toISOString(),
    started_at: row.startedAt?.toISOString() ?? null,
    finished_at: row.finishedAt?.toISOString() ?? null,
  };
}

function analysisUrl(config: AppDeps["config"], analysisId: string): string {
  const base = config.PUBLIC_BASE_URL ? config.PUBLIC_BASE_URL.replace(/\/+$/, "") : "";
  return `${base}/agent/v1/analysis/${analysisId}`;
}
