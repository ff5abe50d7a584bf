import { endJob } from "../../jobs/lifecycle.js";
import { heldInQueue } from "../../jobs/queue-entries.js";
import type { JobDeps } from "../../jobs/registry.js";
import { AppError } from "../../platform/errors.js";
import { failSync } from "./importer.js";
import { notesJobId } from "./service.js";

/**
 * Operator recovery (`requeue-lost`): a meeting-note sync cannot be queued again, because the
 * provider key lived only in the lost entry; it is marked failed with a reason (for good), and the
 * caller's retry under the same request_id imports the page as the next attempt.
 */
export async function failLostSyncs(deps: JobDeps, options: { olderThanSeconds: number }): Promise<string> {
  const olderThan = new Date(Date.now() - options.olderThanSeconds * 1000);
  const rows = await deps.db.noteSync.findMany({
    where: { status: { in: ["queued", "running"] }, updatedAt: { lte: olderThan } },
    select: { id: true, userId: true, requestId: true, entityId: true, attempt: true },
    take: 1000,
  });
  const queue = deps.queues.get("notes-sync");
  let failed = 0;
  for (const row of rows) {
    if (await heldInQueue(queue, notesJobId(row.userId, row.requestId, row.attempt))) continue;
    const error = new AppError(
      "service_unavailable",
      "The import's queued job was lost before it ran; send the same request again (same request_id) to import the page.",
    );
    if (await endJob(deps, () => failSync(deps, row, error))) failed += 1;
  }
  return `meeting-note syncs: checked ${rows.length}, failed ${failed} whose job was lost (the caller retries with the same request_id)`;
}
