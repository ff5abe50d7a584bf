import { jobIds } from "../../jobs/ids.js";
import { heldInQueue } from "../../jobs/queue-entries.js";
import type { JobDeps } from "../../jobs/registry.js";

/**
 * Operator recovery (`requeue-lost`): an evidence capture run queued or running whose queue entry is
 * gone is queued again under the same job id; it continues after its saved cursor.
 */
export async function requeueLostSweeps(deps: JobDeps, options: { olderThanSeconds: number }): Promise<string> {
  const olderThan = new Date(Date.now() - options.olderThanSeconds * 1000);
  const rows = await deps.db.sweepRun.findMany({
    where: { status: { in: ["queued", "running"] }, updatedAt: { lte: olderThan } },
    select: { id: true },
    take: 1000,
  });
  const queue = deps.queues.get("enrichment");
  let requeued = 0;
  for (const row of rows) {
    if (await heldInQueue(queue, jobIds.sweep(row.id))) continue;
    await deps.queues.enqueue("sweep.run.v1", { runId: row.id }, { jobId: jobIds.sweep(row.id) });
    requeued += 1;
  }
  return `evidence capture runs: checked ${rows.length}, requeued ${requeued}`;
}
