import { analysisJobId } from "../analysis/jobs.js";
import { requeueStalled } from "../collection/requeue.js";
import { requeueUnenriched } from "../ingest/requeue.js";
import { failSync } from "../notes/importer.js";
import { notesJobId } from "../notes/service.js";
import type { AppDeps } from "../platform/deps.js";
import { AppError } from "../platform/errors.js";
import { whenReady } from "../platform/redis.js";
import { runJobId } from "../runs/service.js";
import { requeueWebhookDeliveries } from "../webhooks/requeue.js";
import { jobIds } from "./ids.js";
import { jobEnded } from "./lifecycle.js";
import { heldInQueue } from "./queue-entries.js";
import { isLive } from "./states.js";

/**
 * Operator recovery after Redis lost data: every job kind whose row says queued or running
 * but whose queue entry is gone gets its entry back, under the same job id, so running the
 * command twice (or while the entries are back) adds nothing.
 *
 * - collection jobs: re-enqueued, resuming from each platform's cursor (collection/requeue.ts);
 * - analyses: re-enqueued; the analysis restarts and its stream continues after the stored events;
 * - workflow runs: the step the run is at is queued again (its first step, or the continuation
 *   after a child that has ended);
 * - meeting-note syncs: cannot be re-enqueued, because the provider key lived only in the lost
 *   entry; they are marked failed with a reason, and the caller's retry under the same
 *   request_id imports the page;
 * - enrichment: stored rows without enrichment are queued again;
 * - webhook deliveries still open (pending or retrying) are queued again.
 */
type Deps = Pick<AppDeps, "db" | "queues" | "redis" | "config" | "logger" | "reads">;

async function requeueAnalyses(deps: Deps, olderThan: Date): Promise<string> {
  const rows = await deps.db.analysis.findMany({
    where: { status: { in: ["queued", "running"] }, updatedAt: { lte: olderThan } },
    select: { id: true },
    take: 1000,
  });
  const queue = deps.queues.get("analysis");
  let requeued = 0;
  for (const row of rows) {
    if (await heldInQueue(queue, analysisJobId(row.id))) continue;
    await deps.queues.enqueue("analysis.run.v1", { analysisId: row.id }, { jobId: analysisJobId(row.id) });
    requeued += 1;
  }
  return `analyses: checked ${rows.length}, requeued ${requeued}`;
}

async function requeueRuns(deps: Deps, olderThan: Date): Promise<string> {
  const rows = await deps.db.workflowRun.findMany({
    where: { status: { in: ["queued", "running"] }, updatedAt: { lte: olderThan } },
    select: { id: true, collectionJobId: true, analysisId: true },
    take: 1000,
  });
  const queue = deps.queues.get("workflow-run");
  let requeued = 0;
  for (const run of rows) {
    const jobId = await nextRunJobId(deps, run);
    if (!jobId || (await heldInQueue(queue, jobId))) continue;
    await deps.queues.enqueue("workflow.run.v1", { runId: run.id }, { jobId });
    requeued += 1;
  }
  return `workflow runs: checked ${rows.length}, requeued ${requeued}`;
}

/** The job that moves a run on: none while its child is live (the child's end queues it). */
async function nextRunJobId(deps: Deps, run: { id: string; collectionJobId: string | null; analysisId: string | null }) {
  if (run.analysisId) {
    const child = await deps.db.analysis.findUnique({ where: { id: run.analysisId }, select: { status: true } });
    if (child && isLive(child.status)) return undefined;
    return jobIds.runContinuation(run.id, "analysis", run.analysisId);
  }
  if (run.collectionJobId) {
    const child = await deps.db.collectionJob.findUnique({ where: { id: run.collectionJobId }, select: { status: true } });
    if (child && isLive(child.status)) return undefined;
    return jobIds.runContinuation(run.id, "collection_job", run.collectionJobId);
  }
  return runJobId(run.id);
}

async function failLostSyncs(deps: Deps, olderThan: Date): Promise<string> {
  const rows = await deps.db.noteSync.findMany({
    where: { status: { in: ["queued", "running"] }, updatedAt: { lte: olderThan } },
    select: { id: true, userId: true, requestId: true, entityId: true },
    take: 1000,
  });
  const queue = deps.queues.get("notes-sync");
  let failed = 0;
  for (const row of rows) {
    if (await heldInQueue(queue, notesJobId(row.userId, row.requestId))) continue;
    const error = new AppError(
      "service_unavailable",
      "The import's queued job was lost before it ran; send the same request again (same request_id) to import the page.",
    );
    if (await failSync(deps.db, row.id, error)) {
      await jobEnded(deps, { kind: "note_sync", id: row.id, status: "failed", data: { entity_id: row.entityId, error: error.code } });
      failed += 1;
    }
  }
  return `meeting-note syncs: checked ${rows.length}, failed ${failed} whose job was lost (the caller retries with the same request_id)`;
}

export async function requeueLost(deps: Deps, options: { olderThanSeconds?: number } = {}): Promise<string> {
  if (!(await whenReady(deps.queues.connection, 5000))) throw new Error("the job queue (Redis) is unavailable; nothing was requeued");
  const olderThan = new Date(Date.now() - (options.olderThanSeconds ?? 0) * 1000);
  const lines = [
    await requeueStalled(deps, { olderThanSeconds: options.olderThanSeconds ?? 0 }),
    await requeueAnalyses(deps, olderThan),
    await requeueRuns(deps, olderThan),
    await failLostSyncs(deps, olderThan),
    await requeueUnenriched(deps),
    await requeueWebhookDeliveries(deps, { olderThanSeconds: options.olderThanSeconds ?? 0 }),
  ];
  return lines.join("\n");
}
