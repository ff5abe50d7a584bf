import { requireWriter } from "../../access/workspaces/access.js";
import { cancelAnalysis } from "../../insights/analysis/jobs.js";
import { cancelJobRow } from "../../intake/collection/cancel.js";
import { assertCancelled, endJob, removeQueuedEntry } from "../../jobs/lifecycle.js";
import { isLive } from "../../jobs/states.js";
import type { AppDeps } from "../../platform/deps.js";
import { settle } from "./execute.js";
import type { RunRecord } from "./schemas.js";
import { getRun, runJobId } from "./service.js";
import { collectedFrom } from "./steps.js";

/**
 * Cancels a workflow run: it is settled `cancelled` at the cost of the work done (the platforms
 * its finished collection collected; nothing for an analysis that did not finish), never above the
 * approved maximum, and the rest of its reservation is released. Its live child jobs are cancelled
 * with it. Editors and above of the run's workspace may cancel it, whoever started it (a viewer
 * gets 403 `forbidden` before anything changes). Cancelling twice answers the same; a finished
 * run is a 409.
 */
export async function cancelRun(
  deps: AppDeps,
  userId: string,
  params: { entityId: string; skillId: string; runId: string },
): Promise<RunRecord> {
  const record = await getRun(deps.db, userId, params);
  const run = await deps.db.workflowRun.findUniqueOrThrow({ where: { id: record.id } });
  await requireWriter(deps.db, userId, run.workspaceId, "cancel runs");
  let platforms = 0;
  if (run.collectionJobId) {
    const job = await deps.db.collectionJob.findUnique({ where: { id: run.collectionJobId } });
    if (job?.status === "completed") platforms = collectedFrom(job, job.platforms).platformsCollected;
  }
  const changed = await endJob(deps, () => settle(deps, run.id, { status: "cancelled", usage: { platforms, sources: 0 } }));
  const after = await deps.db.workflowRun.findUniqueOrThrow({ where: { id: run.id } });
  assertCancelled("workflow_run", { changed, status: after.status });
  if (changed) {
    await removeQueuedEntry(deps.queues.get("workflow-run"), runJobId(run.id));
    await cancelChildren(deps, after);
  }
  return getRun(deps.db, userId, params);
}

/** The run's collection job and analysis, if still live, are cancelled too. */
async function cancelChildren(deps: AppDeps, run: { collectionJobId: string | null; analysisId: string | null }) {
  if (run.collectionJobId) {
    const child = await deps.db.collectionJob.findUnique({ where: { id: run.collectionJobId } });
    if (child && isLive(child.status)) await cancelJobRow(deps, child, "cancelled with its workflow run");
  }
  if (run.analysisId) {
    const analysis = await deps.db.analysis.findUnique({ where: { id: run.analysisId }, select: { status: true } });
    if (analysis && isLive(analysis.status)) await cancelAnalysis(deps, run.analysisId).catch(() => undefined);
  }
}
