import { randomUUID } from "node:crypto";
import { ACTIVE_WORKSPACE } from "../../access/workspaces/access.js";
import { eventType, type JobEvent } from "../../jobs/events.js";
import { jobIds } from "../../jobs/ids.js";
import type { AppDeps } from "../../platform/deps.js";
import { messageBody, messageIdOf } from "./signing.js";

/**
 * Records the webhook deliveries of a job's end: one row per endpoint of the workspace that
 * takes the event's type and is not disabled, then one `webhook.deliver.v1` job per new row.
 *
 * Idempotent: the message id derives from (kind, job id, state) and a delivery is unique per
 * (endpoint, message), so recording the same event again adds nothing. A delivery whose job
 * could not be queued (Redis refused) stays `pending`; recording the event again, or the
 * operator command `requeue-webhooks`, queues it. One endpoint failing never stops the others,
 * and nothing here throws for it.
 */
type Deps = Pick<AppDeps, "db" | "queues" | "logger">;

/** The queue job of a delivery: one per delivery, so queuing it twice while it waits adds nothing. */
export const deliveryJobId = jobIds.webhookDelivery;

export async function recordJobEvent(deps: Deps, event: JobEvent): Promise<number> {
  const type = eventType(event);
  const messageId = messageIdOf(event);
  const endpoints = await deps.db.webhookEndpoint.findMany({
    where: {
      workspaceId: event.workspaceId,
      // A workspace being deleted sends nothing (src/governance/deletion/workspaces.ts).
      workspace: ACTIVE_WORKSPACE,
      deletedAt: null,
      state: { not: "disabled" },
      OR: [{ eventTypes: { isEmpty: true } }, { eventTypes: { has: type } }],
    },
    select: { id: true },
  });
  if (endpoints.length === 0) return 0;
  const body = messageBody(event);
  let queued = 0;
  for (const endpoint of endpoints) {
    try {
      const target = { endpointId: endpoint.id, workspaceId: event.workspaceId };
      const deliveryId = await recordDelivery(deps, target, messageId, type, body);
      if (!deliveryId) continue;
      await deps.queues.enqueue("webhook.deliver.v1", { deliveryId, ...target }, { jobId: deliveryJobId(deliveryId) });
      queued += 1;
    } catch (err) {
      deps.logger.warn(
        { err, endpointId: endpoint.id, messageId, type },
        "webhook delivery not queued; it stays pending until the event is recorded again or requeue-webhooks runs",
      );
    }
  }
  return queued;
}

/**
 * Inserts the delivery, answering its id; for one that exists already, its id only while it
 * was never attempted (its job may have been refused), so it is queued again under the same
 * job id. Otherwise undefined: nothing to queue.
 */
async function recordDelivery(
  deps: Deps,
  target: { endpointId: string; workspaceId: string },
  messageId: string,
  type: string,
  body: string,
) {
  const { endpointId } = target;
  const inserted = await deps.db.$queryRaw<{ id: string }[]>`
    INSERT INTO webhook_deliveries (id, endpoint_id, message_id, event_type, body)
    VALUES (${randomUUID()}::uuid, ${endpointId}::uuid, ${messageId}, ${type}, ${body})
    ON CONFLICT (endpoint_id, message_id) DO NOTHING
    RETURNING id`;
  if (inserted[0]) return inserted[0].id;
  const existing = await deps.db.webhookDelivery.findUnique({
    where: { endpointId_messageId: { endpointId, messageId } },
    select: { id: true, status: true, attempts: true },
  });
  if (existing?.status === "pending" && existing.attempts === 0) {
    await deps.queues.enqueue("webhook.deliver.v1", { deliveryId: existing.id, ...target }, { jobId: deliveryJobId(existing.id) });
  }
  return undefined;
}
