import { JobCancelled } from "../jobs/cancellation.js";
import { jobIds } from "../jobs/ids.js";
import { assertCancelled, jobEnded, removeQueuedEntry } from "../jobs/lifecycle.js";
import type { AppDeps } from "../platform/deps.js";
import { appendEvent } from "./events.js";

/** The queue side of an analysis: its job id rule, its enqueue and its cancel. */
export const analysisJobId = jobIds.analysis;

export async function enqueueAnalysis(deps: Pick<AppDeps, "queues">, analysisId: string): Promise<void> {
  await deps.queues.enqueue("analysis.run.v1", { analysisId }, { jobId: analysisJobId(analysisId) });
}

export const CANCELLED_DETAIL = "The analysis was cancelled.";

/**
 * Cancels a queued or running analysis: the row turns `cancelled` in the same transaction
 * that stores the stream's terminal `error` event {status: cancelled}, so every relay ends;
 * a queued job leaves the queue and a running worker stops at its next step.
 */
export async function cancelAnalysis(deps: AppDeps, analysisId: string): Promise<void> {
  let changed = true;
  try {
    await appendEvent(deps, analysisId, "error", { status: "cancelled", detail: CANCELLED_DETAIL }, async (tx) => {
      const updated = await tx.analysis.updateMany({
        where: { id: analysisId, status: { in: ["queued", "running"] } },
        data: { status: "cancelled", error: CANCELLED_DETAIL, finishedAt: new Date() },
      });
      if (updated.count === 0) throw new JobCancelled("The analysis");
    });
  } catch (err) {
    if (!(err instanceof JobCancelled)) throw err;
    changed = false;
  }
  const row = await deps.db.analysis.findUnique({ where: { id: analysisId }, select: { status: true, entityId: true } });
  assertCancelled("analysis", { changed, status: row?.status });
  if (!changed) return;
  await removeQueuedEntry(deps.queues.get("analysis"), analysisJobId(analysisId));
  await jobEnded(deps, { kind: "analysis", id: analysisId, status: "cancelled", data: { entity_id: row?.entityId ?? null } });
}
