import { randomUUID } from "node:crypto";
import { isMember, requireRole } from "../../access/workspaces/access.js";
import { audit } from "../../access/workspaces/audit.js";
import type { JobEventType } from "../../jobs/events.js";
import type { DbTx } from "../../platform/db.js";
import type { AppDeps } from "../../platform/deps.js";
import { AppError, notFound, ValidationFailed } from "../../platform/errors.js";
import { secretBoxFor } from "../../platform/secrets.js";
import type { CreateEndpointInput, DeliveryRecord, DeliveryStatus, EndpointRecord, EndpointState } from "./schemas.js";
import { generateSecret } from "./signing.js";
import { assertDeliverable } from "./targets.js";

/**
 * A workspace's webhook endpoints and their deliveries. Every operation checks that the caller
 * is a member of the workspace; an endpoint of another workspace is not found.
 */
type Deps = Pick<AppDeps, "db" | "config">;

/** What the sealed secret is bound to: it opens for this endpoint only. */
export const secretBinding = (endpointId: string) => `webhook-endpoint:${endpointId}`;

export const ENDPOINT_DELETED = "the endpoint was deleted";

const iso = (d: Date | null) => (d ? d.toISOString() : null);

const notConfigured = () =>
  new AppError("service_unavailable", "Webhooks are not configured on this server: the operator must set SECRETS_KEY.");

async function assertMember(deps: Deps, userId: string, workspaceId: string): Promise<void> {
  if (!(await isMember(deps.db, userId, workspaceId))) throw notFound("Workspace");
}

interface EndpointRow {
  id: string;
  workspaceId: string;
  url: string;
  description: string | null;
  eventTypes: string[];
  createdAt: Date;
  state: string;
  consecutiveFailures: number;
  pausedUntil: Date | null;
  disabledAt: Date | null;
  disabledReason: string | null;
}

const endpointRecord = (row: EndpointRow): EndpointRecord => ({
  id: row.id,
  workspace_id: row.workspaceId,
  url: row.url,
  description: row.description,
  event_types: row.eventTypes as JobEventType[],
  created_at: row.createdAt.toISOString(),
  state: row.state as EndpointState,
  consecutive_failures: row.consecutiveFailures,
  paused_until: iso(row.pausedUntil),
  disabled_at: iso(row.disabledAt),
  disabled_reason: row.disabledReason,
});

const ENDPOINT_FIELDS = {
  id: true,
  workspaceId: true,
  url: true,
  description: true,
  eventTypes: true,
  createdAt: true,
  state: true,
  consecutiveFailures: true,
  pausedUntil: true,
  disabledAt: true,
  disabledReason: true,
} as const;

/** 422 when the workspace has WEBHOOK_MAX_ENDPOINTS live endpoints already (0: no limit). Run under the workspace's lock. */
async function assertRoomForEndpoint(tx: DbTx, config: Deps["config"], workspaceId: string): Promise<void> {
  const max = config.WEBHOOK_MAX_ENDPOINTS;
  if (max === 0) return;
  const live = await tx.webhookEndpoint.count({ where: { workspaceId, deletedAt: null } });
  if (live < max) return;
  throw new ValidationFailed([
    {
      loc: ["body"],
      msg: `This workspace has ${live} webhook endpoints; the limit is ${max}. Delete one before registering another.`,
      type: "value_error",
    },
  ]);
}

export async function createEndpoint(
  deps: Deps,
  userId: string,
  workspaceId: string,
  input: CreateEndpointInput,
): Promise<EndpointRecord & { secret: string }> {
  await requireRole(deps.db, userId, workspaceId, "admin", "register webhook endpoints");
  const box = secretBoxFor(deps.config);
  if (!box) throw notConfigured();
  await assertDeliverable(deps.config, input.url);
  const id = randomUUID();
  const secret = generateSecret();
  const row = await deps.db.$transaction(async (tx) => {
    // One registration at a time per workspace, so two at the limit cannot both pass the count.
    await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext(${`webhook-endpoints:${workspaceId}`}))`;
    await assertRoomForEndpoint(tx, deps.config, workspaceId);
    const created = await tx.webhookEndpoint.create({
      data: {
        id,
        workspaceId,
        url: input.url,
        description: input.description ?? null,
        eventTypes: input.event_types,
        secretSealed: box.seal(secret, secretBinding(id)),
        createdBy: userId,
      },
      select: ENDPOINT_FIELDS,
    });
    await audit(tx, workspaceId, userId, "webhook.created", id, { url: input.url, event_types: input.event_types });
    return created;
  });
  return { ...endpointRecord(row), secret };
}

export async function listEndpoints(deps: Deps, userId: string, workspaceId: string): Promise<{ endpoints: EndpointRecord[] }> {
  await assertMember(deps, userId, workspaceId);
  const rows = await deps.db.webhookEndpoint.findMany({
    where: { workspaceId, deletedAt: null },
    orderBy: [{ createdAt: "asc" }, { id: "asc" }],
    select: ENDPOINT_FIELDS,
  });
  return { endpoints: rows.map(endpointRecord) };
}

async function endpointRow(deps: Deps, userId: string, workspaceId: string, endpointId: string): Promise<EndpointRow> {
  await assertMember(deps, userId, workspaceId);
  const row = await deps.db.webhookEndpoint.findFirst({ where: { id: endpointId, workspaceId, deletedAt: null }, select: ENDPOINT_FIELDS });
  if (!row) throw notFound("Webhook endpoint");
  return row;
}

export async function getEndpoint(deps: Deps, userId: string, workspaceId: string, endpointId: string): Promise<EndpointRecord> {
  return endpointRecord(await endpointRow(deps, userId, workspaceId, endpointId));
}

/**
 * Deletes the endpoint: it is no longer listed, read or sent to, its secret is cleared, and its
 * open deliveries end as failed. Deleting it again answers as the first time did.
 */
export async function deleteEndpoint(deps: Deps, userId: string, workspaceId: string, endpointId: string): Promise<void> {
  await requireRole(deps.db, userId, workspaceId, "admin", "delete webhook endpoints");
  const row = await deps.db.webhookEndpoint.findFirst({ where: { id: endpointId, workspaceId }, select: { deletedAt: true } });
  if (!row) throw notFound("Webhook endpoint");
  if (row.deletedAt) return;
  await deps.db.$transaction([
    deps.db.webhookEndpoint.updateMany({
      where: { id: endpointId, deletedAt: null },
      data: { deletedAt: new Date(), secretSealed: "" },
    }),
    deps.db.webhookDelivery.updateMany({
      where: { endpointId, status: { in: ["pending", "retrying"] } },
      data: { status: "failed", lastError: ENDPOINT_DELETED, nextAttemptAt: null },
    }),
    audit(deps.db, workspaceId, userId, "webhook.deleted", endpointId, {}),
  ]);
}

/**
 * An admin enables the endpoint again (`PATCH … {state: "enabled"}`): a pause is lifted or a
 * disable undone, and the failure count starts from zero. Deliveries that a disable ended stay
 * failed; new job ends are delivered again. Audited as `webhook.enabled` when it changed anything.
 */
export async function enableEndpoint(deps: Deps, userId: string, workspaceId: string, endpointId: string): Promise<EndpointRecord> {
  await requireRole(deps.db, userId, workspaceId, "admin", "re-enable webhook endpoints");
  const row = await deps.db.$transaction(async (tx) => {
    const [current] = await tx.$queryRaw<{ state: string; consecutive_failures: number }[]>`
      SELECT state, consecutive_failures FROM webhook_endpoints
      WHERE id = ${endpointId}::uuid AND workspace_id = ${workspaceId}::uuid AND deleted_at IS NULL FOR UPDATE`;
    if (!current) throw notFound("Webhook endpoint");
    if (current.state === "enabled" && current.consecutive_failures === 0) {
      return tx.webhookEndpoint.findUniqueOrThrow({ where: { id: endpointId }, select: ENDPOINT_FIELDS });
    }
    const updated = await tx.webhookEndpoint.update({
      where: { id: endpointId },
      data: { state: "enabled", consecutiveFailures: 0, pausedUntil: null, disabledAt: null, disabledReason: null },
      select: ENDPOINT_FIELDS,
    });
    await audit(tx, workspaceId, userId, "webhook.enabled", endpointId, {
      previous_state: current.state,
      consecutive_failures: current.consecutive_failures,
    });
    return updated;
  });
  return endpointRecord(row);
}

export async function listDeliveries(
  deps: Deps,
  userId: string,
  workspaceId: string,
  endpointId: string,
  page: { limit: number; offset: number },
) {
  const endpoint = await endpointRow(deps, userId, workspaceId, endpointId);
  const [total, rows] = await Promise.all([
    deps.db.webhookDelivery.count({ where: { endpointId: endpoint.id } }),
    deps.db.webhookDelivery.findMany({
      where: { endpointId: endpoint.id },
      orderBy: [{ createdAt: "desc" }, { id: "desc" }],
      skip: page.offset,
      take: page.limit,
      omit: { body: true },
    }),
  ]);
  const deliveries: DeliveryRecord[] = rows.map((r) => ({
    id: r.id,
    message_id: r.messageId,
    event_type: r.eventType as JobEventType,
    status: r.status as DeliveryStatus,
    attempts: r.attempts,
    last_status_code: r.lastStatusCode,
    last_error: r.lastError,
    created_at: r.createdAt.toISOString(),
    updated_at: r.updatedAt.toISOString(),
    last_attempt_at: iso(r.lastAttemptAt),
    next_attempt_at: iso(r.nextAttemptAt),
    delivered_at: iso(r.deliveredAt),
  }));
  const next = page.offset + rows.length;
  return {
    endpoint_id: endpoint.id,
    total,
    limit: page.limit,
    offset: page.offset,
    next_offset: next < total ? next : null,
    deliveries,
  };
}
