import type { Prisma } from "../generated/prisma/client.js";
import { LIVE_QUEUE_STATES } from "../jobs/queue-entries.js";
import type { AppDeps } from "../platform/deps.js";
import { isUuid } from "../workspaces/access.js";
import { type PlatformProgress, readProgress } from "./progress.js";
import { queueStateOf, stalledReason } from "./status.js";

/**
 * Operator repair: re-enqueue collection jobs whose queue entry was lost (Redis flushed
 * or failed over without persistence) or that failed and should run again. The job
 * keeps its id, its BullMQ job id and its stored progress, so it resumes from each
 * platform's cursor; platforms that ended `failed` (or were waiting to retry) run
 * again, settled ones are not repeated.
 */

type Deps = Pick<AppDeps, "db" | "queues">;

export async function requeueJob(deps: Deps, jobId: string): Promise<string> {
  if (!isUuid(jobId)) throw new Error(`'${jobId}' is not a collection job id`);
  const row = await deps.db.collectionJob.findUnique({ where: { id: jobId } });
  if (!row) throw new Error(`no collection job ${jobId}`);
  if (row.status === "completed") return `collection job ${jobId} is completed; nothing to requeue`;
  // Cancelled and partial are final: a requeue would run what the caller stopped, and send a second end.
  if (row.status === "cancelled" || row.status === "partial") {
    return `collection job ${jobId} is ${row.status}, which is final; nothing to requeue (create a new job to collect again)`;
  }

  const queue = deps.queues.get("collection");
  const existing = await queue.getJob(row.queueJobId);
  if (existing) {
    const state = await existing.getState();
    if (LIVE_QUEUE_STATES.has(state)) return `collection job ${jobId} is already ${state} in the queue`;
    await existing.remove();
  }

  const progress = readProgress(row.progress, row.platforms);
  for (const [platform, p] of Object.entries(progress)) {
    if (p.status === "failed" || p.status === "retrying") progress[platform] = reopen(p);
  }
  await deps.db.collectionJob.update({
    where: { id: jobId },
    data: { status: "queued", error: null, finishedAt: null, progress: progress as unknown as Prisma.InputJsonValue },
  });
  await deps.queues.enqueue("collection.run.v1", { jobId: row.id }, { jobId: row.queueJobId });
  return `collection job ${jobId} requeued`;
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
    select: { id: true, status: true, queueJobId: true },
    orderBy: { updatedAt: "asc" },
    take: options.limit ?? 1000,
  });
  const requeued: string[] = [];
  for (const row of rows) {
    const state = await queueStateOf(deps, row.queueJobId);
    if (state === undefined) throw new Error("the job queue (Redis) is unavailable; nothing was requeued");
    if (!stalledReason(row.status, state)) continue;
    await requeueJob(deps, row.id);
    requeued.push(row.id);
  }
  return `checked ${rows.length} unfinished collection job(s); requeued ${requeued.length}${requeued.length ? `: ${requeued.join(", ")}` : ""}`;
}
