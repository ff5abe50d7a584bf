import { audit } from "../../access/workspaces/audit.js";
import type { Config } from "../../platform/config.js";
import type { DbTx } from "../../platform/db.js";
import type { AppDeps } from "../../platform/deps.js";
import type { EndpointState } from "./schemas.js";

/**
 * The circuit breaker of an endpoint, as Svix and Stripe run theirs. Every attempt that reached
 * for the endpoint (a non-2xx answer, no answer in time, a network error) counts a failure; any
 * success resets the count and lifts a pause.
 *
 * - WEBHOOK_PAUSE_AFTER_FAILURES failures in a row (5) pause the endpoint: none of its deliveries
 *   is attempted (nor counts an attempt) before `paused_until`. The pause is WEBHOOK_PAUSE_MS (1 min)
 *   and doubles with each further failure, up to WEBHOOK_PAUSE_MAX_MS (1 h). When it ends, the next
 *   attempts probe the endpoint: a success enables it, a failure pauses it again, for longer.
 * - WEBHOOK_DISABLE_AFTER_FAILURES failures in a row (50) disable it: its open deliveries end
 *   `failed`, new job ends are not recorded for it, and the audit log says `webhook.disabled`, until
 *   an admin enables it again. With the pauses between them (2 attempts per endpoint at a time, one
 *   round per pause), 50 failures take some 20 hours or more.
 */
type Deps = Pick<AppDeps, "db" | "config">;
export type BreakerConfig = Pick<
  Config,
  "WEBHOOK_PAUSE_AFTER_FAILURES" | "WEBHOOK_PAUSE_MS" | "WEBHOOK_PAUSE_MAX_MS" | "WEBHOOK_DISABLE_AFTER_FAILURES"
>;

export interface BreakerState {
  state: EndpointState;
  consecutiveFailures: number;
  pausedUntil: Date | null;
}

/** The `last_error` of deliveries ended by a disable: `the endpoint was disabled: <reason>`. */
export const disabledError = (reason: string | null) => `the endpoint was disabled: ${reason ?? "by its circuit breaker"}`;

/** How long an endpoint is paused after `failures` failed attempts in a row; 0 below the threshold (or with pauses off). */
export function pauseMs(config: BreakerConfig, failures: number): number {
  const threshold = config.WEBHOOK_PAUSE_AFTER_FAILURES;
  if (threshold === 0 || failures < threshold) return 0;
  // 2^(failures - threshold), without overflowing for long runs.
  const doublings = Math.min(failures - threshold, 40);
  return Math.min(config.WEBHOOK_PAUSE_MS * 2 ** doublings, config.WEBHOOK_PAUSE_MAX_MS);
}

/** The breaker after one more failed attempt at `now`. A pause in force is never shortened. */
export function afterFailure(config: BreakerConfig, current: BreakerState, now: Date): BreakerState {
  const consecutiveFailures = current.consecutiveFailures + 1;
  const disableAfter = config.WEBHOOK_DISABLE_AFTER_FAILURES;
  if (current.state === "disabled" || (disableAfter > 0 && consecutiveFailures >= disableAfter)) {
    return { state: "disabled", consecutiveFailures, pausedUntil: null };
  }
  const pause = pauseMs(config, consecutiveFailures);
  if (pause === 0) return { ...current, consecutiveFailures };
  const until = now.getTime() + pause;
  const pausedUntil = new Date(Math.max(until, current.pausedUntil?.getTime() ?? 0));
  return { state: "paused", consecutiveFailures, pausedUntil };
}

/** Records a successful attempt: the count is reset and a pause lifted (a disabled endpoint stays so). */
export async function noteSuccess(deps: Pick<Deps, "db">, endpointId: string): Promise<void> {
  await deps.db.webhookEndpoint.updateMany({
    where: { id: endpointId, state: { not: "disabled" }, OR: [{ consecutiveFailures: { gt: 0 } }, { state: "paused" }] },
    data: { state: "enabled", consecutiveFailures: 0, pausedUntil: null },
  });
}

/**
 * Records a failed attempt (`error` says how it failed) and answers the endpoint's state after it.
 * Serialised per endpoint by a row lock, so concurrent failures count one each.
 */
export async function noteFailure(deps: Deps, endpointId: string, error: string): Promise<EndpointState> {
  return deps.db.$transaction(async (tx) => {
    const [row] = await tx.$queryRaw<(BreakerState & { workspaceId: string })[]>`
      SELECT workspace_id AS "workspaceId", state, consecutive_failures AS "consecutiveFailures", paused_until AS "pausedUntil"
      FROM webhook_endpoints WHERE id = ${endpointId}::uuid AND deleted_at IS NULL FOR UPDATE`;
    if (!row || row.state === "disabled") return "disabled";
    const now = new Date();
    const next = afterFailure(deps.config, row, now);
    if (next.state === "disabled") {
      await disable(tx, row.workspaceId, endpointId, next.consecutiveFailures, error, now);
      return next.state;
    }
    await tx.webhookEndpoint.update({
      where: { id: endpointId },
      data: { state: next.state, consecutiveFailures: next.consecutiveFailures, pausedUntil: next.pausedUntil },
    });
    if (next.pausedUntil && next.pausedUntil.getTime() !== row.pausedUntil?.getTime()) {
      // The open deliveries show when they will be attempted at the earliest.
      await tx.webhookDelivery.updateMany({
        where: {
          endpointId,
          status: { in: ["pending", "retrying"] },
          OR: [{ nextAttemptAt: null }, { nextAttemptAt: { lt: next.pausedUntil } }],
        },
        data: { nextAttemptAt: next.pausedUntil },
      });
    }
    return next.state;
  });
}

async function disable(tx: DbTx, workspaceId: string, endpointId: string, failures: number, error: string, now: Date): Promise<void> {
  const reason = `${failures} failed attempts in a row; the last: ${error}`;
  await tx.webhookEndpoint.update({
    where: { id: endpointId },
    data: { state: "disabled", consecutiveFailures: failures, pausedUntil: null, disabledAt: now, disabledReason: reason },
  });
  await tx.webhookDelivery.updateMany({
    where: { endpointId, status: { in: ["pending", "retrying"] } },
    data: { status: "failed", lastError: disabledError(reason), nextAttemptAt: null },
  });
  await audit(tx, workspaceId, null, "webhook.disabled", endpointId, { consecutive_failures: failures, reason });
}

/** Ends an open delivery of a disabled endpoint as failed (one recorded just before the disable). */
export async function failForDisabled(deps: Pick<Deps, "db">, deliveryId: string, reason: string | null): Promise<void> {
  await deps.db.webhookDelivery.updateMany({
    where: { id: deliveryId, status: { in: ["pending", "retrying"] } },
    data: { status: "failed", lastError: disabledError(reason), nextAttemptAt: null },
  });
}
