import { isUuid } from "../../access/workspaces/access.js";
import type { CollectionJob, Prisma } from "../../generated/prisma/client.js";
import { jobIds } from "../../jobs/ids.js";
import { LIVE_QUEUE_STATES } from "../../jobs/queue-entries.js";
import { isLive } from "../../jobs/states.js";
import { submit } from "../../jobs/submit.js";
import type { AppDeps } from "../../platform/deps.js";
import { type JobProgress, type PlatformProgress, readProgress } from "./progress.js";
import { derivedUuid } from "./service.js";
import { queueStateOf, stalledReason } from "./status.js";

/**
 * Operator repair (`requeue-job`, `requeue-stalled`). Terminal states are final: a job that is
 * completed, cancelled or partial is refused, and a failed one stays failed.
 *
 * - A queued or running job whose queue entry was lost (Redis flushed or failed over without
 *   persistence) is queued again in place: it keeps its id, its BullMQ job id and its stored
 *   progress, so it resumes from each platform's cursor.
 * - A failed job is retried as a new job: attempt n + 1 of the same (user, idempotency key), with
 *   `retry_of` naming the failed one, its own id and queue job id, the failed job's entity,
 *   platforms and parameters, and its progress with the platforms that failed (or were waiting to
 *   retry) reopened at their cursors; settled ones are not repeated. It is submitted as a create
 *   is (row, then queue entry; a refused enqueue removes the row again), and a replay of the
 *   original create's idempotency key then answers it.
 */

type Deps = Pick<AppDeps, "db" | "queues">;

/**
 * What a requeue did: `done` when the job is queued again or a retry of it exists (started now, or
 * by an earlier requeue); not done when it was refused (its state is final, the queue still holds
 * it, it ended meanwhile, or a failed job's entity is gone), which the operator command exits 1 for.
 */
export interface RequeueOutcome {
  done: boolean;
  message: string;
}

export async function requeueJob(deps: Deps, jobId: string): Promise<RequeueOutcome> {
  if (!isUuid(jobId)) throw new Error(`'${jobId}' is not a collection job id`);
  const row = await deps.db.collectionJob.findUnique({ where: { id: jobId } });
  if (!row) throw new Error(`no collection job ${jobId}`);
  if (row.status === "failed") return retryFailedJob(deps, row);
  // Completed, cancelled and partial are final: a requeue would run what ended, and send a second end.
  if (!isLive(row.status)) {
    return {
      done: false,
      message: `collection job ${jobId} is ${row.status}, which is final; nothing to requeue (create a new job to collect again)`,
    };
  }

  const live = await requeueLive(deps, row);
  return { done: live.requeued, message: live.message };
}

/** A queued or running job's lost queue entry, put back in place. */
async function requeueLive(deps: Deps, row: CollectionJob): Promise<{ requeued: boolean; message: string }> {
  const queue = deps.queues.get("collection");
  const existing = await queue.getJob(row.queueJobId);
  if (existing) {
    const state = await existing.getState();
    if (LIVE_QUEUE_STATES.has(state)) return { requeued: false, message: `collection job ${row.id} is already ${state} in the queue` };
    await existing.remove();
  }

  // Only a job still queued or running goes back to queued: one that ended meanwhile stays as it ended.
  const requeued = await deps.db.collectionJob.updateMany({
    where: { id: row.id, status: { in: ["queued", "running"] } },
    data: { status: "queued", error: null, finishedAt: null, progress: reopened(row) as unknown as Prisma.InputJsonValue },
  });
  if (requeued.count === 0) {
    const now = await deps.db.collectionJob.findUnique({ where: { id: row.id }, select: { status: true } });
    return { requeued: false, message: `collection job ${row.id} ended meanwhile (${now?.status ?? "deleted"}); nothing to requeue` };
  }
  await deps.queues.enqueue("collection.run.v1", { jobId: row.id }, { jobId: row.queueJobId });
  return { requeued: true, message: `collection job ${row.id} requeued` };
}

interface NewAttempt {
  id: string;
  status: string;
  queue_job_id: string;
}

/**
 * A failed job's retry: attempt n + 1 of its key, a new job. Of concurrent requeues of one failed
 * job, the unique (user, key, attempt) index lets one create it; the others name it.
 */
async function retryFailedJob(deps: Deps, row: CollectionJob): Promise<RequeueOutcome> {
  const attempt = row.attempt + 1;
  const id = derivedUuid("collection-job", row.userId, row.idempotencyKey, `attempt-${attempt}`);
  const queueJobId = jobIds.collection(row.userId, row.idempotencyKey, attempt);
  const progress = JSON.stringify(reopened(row));
  const final = `collection job ${row.id} is failed, which is final`;

  let submitted: { row: NewAttempt; created: boolean };
  try {
    submitted = await submit<NewAttempt>({
      write: async () => {
        // The entity must still exist in an active workspace; the failed job is left exactly as it is.
        const inserted = await deps.db.$queryRaw<NewAttempt[]>`
          INSERT INTO collection_jobs (
            id, user_id, entity_id, idempotency_key, request_hash, queue_job_id, route, status,
            objective, questions, depth, platforms, collection_only, progress, attempt, retry_of, updated_at
          )
          SELECT ${id}::uuid, j.user_id, j.entity_id, j.idempotency_key, j.request_hash, ${queueJobId}, j.route, 'queued',
            j.objective, j.questions, j.depth, j.platforms, j.collection_only, ${progress}::jsonb, ${attempt}, j.id, now()
          FROM collection_jobs j
          JOIN entities e ON e.id = j.entity_id
          JOIN workspaces w ON w.id = e.workspace_id AND w.state = 'active'
          WHERE j.id = ${row.id}::uuid AND j.status = 'failed'
          ON CONFLICT DO NOTHING
          RETURNING id, status, queue_job_id`;
        if (inserted[0]) return { row: inserted[0], created: true };
        const next = await deps.db.collectionJob.findFirst({
          where: { userId: row.userId, idempotencyKey: row.idempotencyKey, attempt },
          select: { id: true, status: true, queueJobId: true },
        });
        if (!next) throw new NoEntity();
        return { row: { id: next.id, status: next.status, queue_job_id: next.queueJobId }, created: false };
      },
      enqueue: (job) => deps.queues.enqueue("collection.run.v1", { jobId: job.id }, { jobId: job.queue_job_id }),
      undo: (job) => deps.db.$executeRaw`DELETE FROM collection_jobs WHERE id = ${job.id}::uuid AND status = 'queued' AND attempts = 0`,
    });
  } catch (err) {
    if (!(err instanceof NoEntity)) throw err;
    return {
      done: false,
      message: `${final}; its entity no longer exists (or its workspace is being deleted), so no new attempt was started`,
    };
  }
  const { row: job, created } = submitted;
  if (!created)
    return { done: true, message: `${final}; it was already retried as collection job ${job.id} (attempt ${attempt}, ${job.status})` };
  return { done: true, message: `${final}; started collection job ${job.id} to retry it (retry_of ${row.id})` };
}

/** No new attempt could be written: the failed job's entity is gone (or its workspace is being deleted). */
class NoEntity extends Error {}

/** The job's progress with the platforms that failed, or were waiting to retry, reopened. */
function reopened(row: CollectionJob): JobProgress {
  const progress = readProgress(row.progress, row.platforms);
  for (const [platform, p] of Object.entries(progress)) {
    if (p.status === "failed" || p.status === "retrying") progress[platform] = reopen(p);
  }
  return progress;
}

/** A platform to run again from where it stopped (cursor and counts kept). */
function reopen(p: PlatformProgress): PlatformProgress {
  return { ...p, status: "pending", coverage_state: null, reason: null, error: null, finished_at: null, reached_end: false };
}

/** Re-enqueues every queued or running job the queue no longer holds. */
export async function requeueStalled(deps: Deps, options: { olderThanSeconds?: number; limit?: number } = {}): Promise<string> {
  const olderThan = new Date(Date.now() - (options.olderThanSeconds ?? 0) * 1000);
  const rows = await deps.db.collectionJob.findMany({
    where: { status: { in: ["queued", "running"] }, updatedAt: { lte: olderThan } },
    orderBy: { updatedAt: "asc" },
    take: options.limit ?? 1000,
  });
  const requeued: string[] = [];
  for (const row of rows) {
    const state = await queueStateOf(deps, row.queueJobId);
    if (state === undefined) throw new Error("the job queue (Redis) is unavailable; nothing was requeued");
    if (!stalledReason(row.status, state)) continue;
    if ((await requeueLive(deps, row)).requeued) requeued.push(row.id);
  }
  return `checked ${rows.length} unfinished collection job(s); requeued ${requeued.length}${requeued.length ? `: ${requeued.join(", ")}` : ""}`;
}
