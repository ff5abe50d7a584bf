import { heldInQueue } from "../../jobs/queue-entries.js";
import type { JobDeps } from "../../jobs/registry.js";
import { analysisJobId } from "./jobs.js";

/**
 * Operator recovery (`requeue-lost`): an analysis queued or running whose queue entry is gone is
 * queued again under the same job id; it restarts and its stream continues after the stored events.
 */
export async function requeueLostAnalyses(deps: JobDeps, options: { olderThanSeconds: number }): Promise<string> {
  const olderThan = new Date(Date.now() - options.olderThanSeconds * 1000);
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
