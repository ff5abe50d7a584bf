import { JobCancelled } from "../../jobs/cancellation.js";
import { jobIds } from "../../jobs/ids.js";
import { assertCancelled, cancelJob } from "../../jobs/lifecycle.js";
import { isLive } from "../../jobs/states.js";
import { submit } from "../../jobs/submit.js";
import type { AppDeps } from "../../platform/deps.js";
import { appendEvent } from "./events.js";
import type { RunInput } from "./schemas.js";
import { startAnalysis } from "./service.js";

/** The queue side of an analysis: its job id rule, its enqueue and its cancel. */
export const analysisJobId = jobIds.analysis;

export async function enqueueAnalysis(deps: Pick<AppDeps, "queues">, analysisId: string): Promise<void> {
  await deps.queues.enqueue("analysis.run.v1", { analysisId }, { jobId: analysisJobId(analysisId) });
}

/**
 * Creates (or replays, by request_id) an analysis and queues its job, as every job kind is
 * submitted (src/jobs/submit.ts): a refusal of the queue removes an analysis this call created.
 * The one way an analysis is made: the analysis route, a collection job continuing into its
 * synthesis and a workflow run's analysis step all submit through here.
 * The stream may subscribe after the job is queued: events are stored before they are published,
 * and a relay replays the stored ones after subscribing.
 */
export async function submitAnalysis(
  deps: Pick<AppDeps, "db" | "queues">,
  userId: string,
  input: RunInput,
  options: { forRun?: boolean } = {},
) {
  const { row: analysis, created } = await submit({
    write: async () => {
      const started = await startAnalysis(deps.db, userId, input, options);
      return { row: started.analysis, created: started.created };
    },
    enqueue: (row) => enqueueAnalysis(deps, row.id),
    undo: (row) => deps.db.analysis.deleteMany({ where: { id: row.id, status: "queued" } }),
    // A replay of an unfinished analysis heals a lost queue entry (a no-op while the queue holds it).
    requeueOnReplay: (row) => isLive(row.status),
  });
  return { analysis, created };
}

export const CANCELLED_DETAIL = "The analysis was cancelled.";

/**
 * Cancels a queued or running analysis: the row turns `cancelled` in the same transaction
 * that stores the stream's terminal `error` event {status: cancelled}, so every relay ends;
 * a queued job leaves the queue and a running worker stops at its next step.
 */
export async function cancelAnalysis(deps: AppDeps, analysisId: string): Promise<void> {
  const row = await deps.db.analysis.findUnique({ where: { id: analysisId }, select: { entityId: true } });
  const outcome = await cancelJob(deps, {
    kind: "analysis",
    id: analysisId,
    entry: { queue: deps.queues.get("analysis"), id: analysisJobId(analysisId) },
    data: { entity_id: row?.entityId ?? null },
    transition: async () => {
      try {
        await appendEvent(deps, analysisId, "error", { status: "cancelled", detail: CANCELLED_DETAIL }, async (tx) => {
          const updated = await tx.analysis.updateMany({
            where: { id: analysisId, status: { in: ["queued", "running"] } },
            data: { status: "cancelled", error: CANCELLED_DETAIL, finishedAt: new Date() },
          });
          if (updated.count === 0) throw new JobCancelled("The analysis");
        });
        return { changed: true, status: "cancelled" };
      } catch (err) {
        if (!(err instanceof JobCancelled)) throw err;
        const now = await deps.db.analysis.findUnique({ where: { id: analysisId }, select: { status: true } });
        return { changed: false, status: now?.status };
      }
    },
  });
  assertCancelled("analysis", outcome);
}
