import { jobIds } from "../../jobs/ids.js";
import { heldInQueue } from "../../jobs/queue-entries.js";
import type { JobDeps } from "../../jobs/registry.js";
import { isLive } from "../../jobs/states.js";
import { runJobId } from "./service.js";

/**
 * Operator recovery (`requeue-lost`): a workflow run queued or running whose queue entry is gone has
 * the step it is at queued again (its first step, or the continuation after a child that has ended).
 */
export async function requeueLostRuns(deps: JobDeps, options: { olderThanSeconds: number }): Promise<string> {
  const olderThan = new Date(Date.now() - options.olderThanSeconds * 1000);
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
async function nextRunJobId(deps: JobDeps, run: { id: string; collectionJobId: string | null; analysisId: string | null }) {
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
