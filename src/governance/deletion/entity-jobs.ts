import { cancelAnalysis } from "../../insights/analysis/jobs.js";
import { cancelJobRow } from "../../intake/collection/cancel.js";
import { cancelSyncRow } from "../../intake/notes/service.js";
import { cancelSweepRow } from "../../intake/sweeps/run.js";
import { removeQueuedEntry } from "../../jobs/lifecycle.js";
import type { AppDeps } from "../../platform/deps.js";
import { AppError } from "../../platform/errors.js";
import { settle } from "../../workflows/runs/execute.js";
import { runJobId } from "../../workflows/runs/service.js";
import { collectedFrom } from "../../workflows/runs/steps.js";

/**
 * Before an entity's originals go, every job still working on it is cancelled through its kind's own
 * cancel transition, so each one's end is announced (waiting requests wake, webhooks are delivered, a
 * workflow run waiting on a child is not continued into a deleted entity): workflow runs first (settled at
 * the cost of the work done, their reservation released), then collection jobs, analyses naming the entity,
 * meeting-note syncs and evidence capture runs. A job that ended meanwhile is left as it is.
 */
export const DELETION_DETAIL = "cancelled: its entity is being deleted";

export interface CancelledJobs {
  workflow_runs: number;
  collection_jobs: number;
  analyses: number;
  note_syncs: number;
  sweep_runs: number;
}

const LIVE = ["queued", "running"];

export async function cancelEntityJobs(deps: AppDeps, entityId: string): Promise<CancelledJobs> {
  const out: CancelledJobs = { workflow_runs: 0, collection_jobs: 0, analyses: 0, note_syncs: 0, sweep_runs: 0 };
  const db = deps.db;

  for (const run of await db.workflowRun.findMany({ where: { entityId, status: { in: LIVE } } })) {
    let platforms = 0;
    if (run.collectionJobId) {
      const job = await db.collectionJob.findUnique({ where: { id: run.collectionJobId } });
      if (job?.status === "completed") platforms = collectedFrom(job, job.platforms).platformsCollected;
    }
    if (await settle(deps, run.id, { status: "cancelled", usage: { platforms, sources: 0 } })) {
      await removeQueuedEntry(deps.queues.get("workflow-run"), runJobId(run.id));
      out.workflow_runs++;
    }
  }

  for (const job of await db.collectionJob.findMany({ where: { entityId, status: { in: LIVE } } })) {
    if ((await cancelJobRow(deps, job, DELETION_DETAIL)).changed) out.collection_jobs++;
  }

  for (const analysis of await db.analysis.findMany({ where: { entityId, status: { in: LIVE } }, select: { id: true } })) {
    try {
      await cancelAnalysis(deps, analysis.id);
      out.analyses++;
    } catch (err) {
      // Ended meanwhile (409) or gone (404): nothing left to cancel.
      if (!(err instanceof AppError)) throw err;
    }
  }

  for (const sync of await db.noteSync.findMany({ where: { entityId, status: { in: LIVE } } })) {
    const outcome = await cancelSyncRow(deps, sync, DELETION_DETAIL);
    if (outcome.changed) out.note_syncs++;
  }

  for (const sweep of await db.sweepRun.findMany({ where: { entityId, status: { in: LIVE } }, select: { id: true, entityId: true } })) {
    const outcome = await cancelSweepRow(deps, sweep, DELETION_DETAIL);
    if (outcome.changed) out.sweep_runs++;
  }
  return out;
}

export const totalCancelled = (c: CancelledJobs) => c.workflow_runs + c.collection_jobs + c.analyses + c.note_syncs + c.sweep_runs;
