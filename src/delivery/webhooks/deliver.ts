import type { AppDeps } from "../../platform/deps.js";
import { isOutboundRefusal, outboundFetch } from "../../platform/outbound.js";
import { type SecretBox, secretBoxFor } from "../../platform/secrets.js";
import { disabledError, noteFailure, noteSuccess } from "./breaker.js";
import { retryDelayMs } from "./retry.js";
import { secretBinding } from "./service.js";
import { signedHeaders } from "./signing.js";
import { deliveryPolicy } from "./targets.js";

/**
 * One attempt of one delivery: sign the stored body with the endpoint's secret and the current
 * time, POST it through the outbound policy, and record the outcome on the row and on the
 * endpoint's circuit breaker (breaker.ts). A 2xx answer is success; any other answer, a timeout
 * or a network error is retried on the schedule; an address the policy refuses, or a secret that
 * no longer opens, fails the delivery at once.
 */
type Deps = Pick<AppDeps, "db" | "config" | "logger">;

export type AttemptOutcome =
  /** The delivery no longer exists (its endpoint was deleted) or already ended. */
  | { kind: "nothing_to_do" }
  | { kind: "succeeded"; statusCode: number }
  /** Failed for good: no further attempt. */
  | { kind: "failed"; error: string }
  /** Failed this time; `final` when it was the last attempt. */
  | { kind: "retry"; error: string; final: boolean };

export interface AttemptInfo {
  /** 1 for the first attempt. */
  number: number;
  /** True when no attempt follows this one whatever its outcome. */
  last: boolean;
}

const USER_AGENT = "research-evidence-webhooks/1";

function describeFailure(err: unknown, timeoutMs: number): string {
  const e = err as { name?: string; message?: string; cause?: { code?: string; message?: string } };
  if (e?.name === "TimeoutError" || e?.name === "AbortError") return `no answer within ${timeoutMs} ms`;
  const cause = e?.cause?.code ?? e?.cause?.message;
  return cause ? `${e.message ?? "request failed"}: ${cause}` : (e?.message ?? String(err));
}

/** An open delivery with what an attempt needs of its endpoint. */
export interface OpenDelivery {
  id: string;
  messageId: string;
  body: string;
  endpoint: {
    id: string;
    workspaceId: string;
    url: string;
    secretSealed: string;
    state: string;
    pausedUntil: Date | null;
    disabledReason: string | null;
  };
}

/** The delivery, while it is open and its endpoint not deleted; otherwise undefined (nothing to do). */
export async function openDelivery(deps: Pick<Deps, "db">, deliveryId: string): Promise<OpenDelivery | undefined> {
  const delivery = await deps.db.webhookDelivery.findUnique({
    where: { id: deliveryId },
    select: {
      id: true,
      messageId: true,
      body: true,
      status: true,
      endpoint: {
        select: {
          id: true,
          workspaceId: true,
          url: true,
          secretSealed: true,
          deletedAt: true,
          state: true,
          pausedUntil: true,
          disabledReason: true,
          workspace: { select: { state: true } },
        },
      },
    },
  });
  if (!delivery || delivery.status === "succeeded" || delivery.status === "failed" || delivery.endpoint.deletedAt) return undefined;
  // A workspace being deleted sends nothing; the delivery stays open (requeue-webhooks after a restore sends it).
  if (delivery.endpoint.workspace.state !== "active") return undefined;
  const { deletedAt: _deleted, workspace: _workspace, ...endpoint } = delivery.endpoint;
  return { id: delivery.id, messageId: delivery.messageId, body: delivery.body, endpoint };
}

export async function attemptDelivery(deps: Deps, delivery: OpenDelivery, attempt: AttemptInfo): Promise<AttemptOutcome> {
  const startedAt = new Date();
  const record = async (outcome: AttemptOutcome, statusCode: number | null) => {
    const now = new Date();
    const delay = outcome.kind === "retry" && !outcome.final ? retryDelayMs(deps.config, attempt.number) : -1;
    const status = outcome.kind === "succeeded" ? "succeeded" : outcome.kind === "retry" && !outcome.final ? "retrying" : "failed";
    // Only while still open: a delivery failed meanwhile (its endpoint deleted) keeps that end.
    const { count } = await deps.db.webhookDelivery.updateMany({
      where: { id: delivery.id, status: { in: ["pending", "retrying"] } },
      data: {
        status,
        attempts: { increment: 1 },
        lastStatusCode: statusCode,
        lastError: outcome.kind === "succeeded" ? null : outcome.kind === "nothing_to_do" ? null : outcome.error,
        lastAttemptAt: startedAt,
        nextAttemptAt: delay >= 0 ? new Date(now.getTime() + delay) : null,
        ...(outcome.kind === "succeeded" ? { deliveredAt: now } : {}),
      },
    });
    return count === 0 ? ({ kind: "nothing_to_do" } as const) : outcome;
  };
  /** Records an attempt that reached for the endpoint, on the row and then on the breaker. */
  const reached = async (outcome: AttemptOutcome & { kind: "succeeded" | "retry" }, statusCode: number | null) => {
    const recorded = await record(outcome, statusCode);
    if (outcome.kind === "succeeded") {
      await noteSuccess(deps, delivery.endpoint.id);
      return recorded;
    }
    const state = await noteFailure(deps, delivery.endpoint.id, outcome.error);
    // The disable ended this delivery with the others.
    return state === "disabled" && recorded.kind === "retry" ? ({ kind: "failed", error: disabledError(null) } as const) : recorded;
  };

  const box: SecretBox | undefined = secretBoxFor(deps.config);
  if (!box) return record({ kind: "retry", error: "SECRETS_KEY is not configured on the worker", final: attempt.last }, null);
  let secret: string;
  try {
    secret = box.open(delivery.endpoint.secretSealed, secretBinding(delivery.endpoint.id));
  } catch {
    return record({ kind: "failed", error: "the endpoint's signing secret does not open with this SECRETS_KEY" }, null);
  }

  const timeoutMs = deps.config.WEBHOOK_TIMEOUT_MS;
  try {
    const res = await outboundFetch(
      delivery.endpoint.url,
      {
        method: "POST",
        body: delivery.body,
        headers: {
          "content-type": "application/json",
          "user-agent": USER_AGENT,
          ...signedHeaders(secret, delivery.messageId, delivery.body, startedAt),
        },
        signal: AbortSignal.timeout(timeoutMs),
      },
      deliveryPolicy(deps.config),
    );
    await res.body?.cancel().catch(() => undefined);
    if (res.status >= 200 && res.status < 300) return reached({ kind: "succeeded", statusCode: res.status }, res.status);
    return reached({ kind: "retry", error: `the endpoint answered HTTP ${res.status}`, final: attempt.last }, res.status);
  } catch (err) {
    if (isOutboundRefusal(err)) {
      return record({ kind: "failed", error: `refused by the outbound address policy: ${(err as Error).message}` }, null);
    }
    return reached({ kind: "retry", error: describeFailure(err, timeoutMs), final: attempt.last }, null);
  }
}
