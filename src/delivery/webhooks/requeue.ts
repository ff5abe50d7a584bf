import { heldInQueue } from "../../jobs/queue-entries.js";
import type { AppDeps } from "../../platform/deps.js";
import { deliveryJobId } from "./dispatch.js";

/**
 * Operator recovery (`npm run admin -- requeue-webhooks [older_than_seconds]`): every delivery
 * still open (`pending` or `retrying`) whose queue entry is gone (Redis refused the enqueue, or
 * lost its data) is queued again under its own job id. Running it twice adds nothing. A
 * delivery queued again starts the retry schedule from its beginning; its attempt count goes on.
 */
export async function requeueWebhookDeliveries(
  deps: Pick<AppDeps, "db" | "queues">,
  options: { olderThanSeconds: number },
): Promise<string> {
  const olderThan = new Date(Date.now() - options.olderThanSeconds * 1000);
  const rows = await deps.db.webhookDelivery.findMany({
    where: { status: { in: ["pending", "retrying"] }, updatedAt: { lte: olderThan }, endpoint: { deletedAt: null } },
    select: { id: true, endpoint: { select: { id: true, workspaceId: true } } },
    orderBy: { updatedAt: "asc" },
    take: 5000,
  });
  const queue = deps.queues.get("webhooks");
  let requeued = 0;
  for (const row of rows) {
    const jobId = deliveryJobId(row.id);
    if (await heldInQueue(queue, jobId)) continue;
    const payload = { deliveryId: row.id, endpointId: row.endpoint.id, workspaceId: row.endpoint.workspaceId };
    await deps.queues.enqueue("webhook.deliver.v1", payload, { jobId });
    requeued += 1;
  }
  return `webhook deliveries: checked ${rows.length}, requeued ${requeued}`;
}
