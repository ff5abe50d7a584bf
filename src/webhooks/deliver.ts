import type { AppDeps } from "../platform/deps.js";
import { isOutboundRefusal, outboundFetch } from "../platform/outbound.js";
import { type SecretBox, secretBoxFor } from "../platform/secrets.js";
import { retryDelayMs } from "./retry.js";
import { secretBinding } from "./service.js";
import { signedHeaders } from "./signing.js";
import { deliveryPolicy } from "./targets.js";

/**
 * One attempt of one delivery: sign the stored body with the endpoint's secret and the current
 * time, POST it through the outbound policy, and record the outcome on the row. A 2xx answer
 * is success; any other answer, a timeout or a network error is retried on the schedule; an
 * address the policy refuses, or a secret that no longer opens, fails the delivery at once.
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

export async function attemptDelivery(deps: Deps, deliveryId: string, attempt: AttemptInfo): Promise<AttemptOutcome> {
  const delivery = await deps.db.webhookDelivery.findUnique({
    where: { id: deliveryId },
    include: { endpoint: { select: { id: true, url: true, secretSealed: true, deletedAt: true } } },
  });
  if (!delivery || delivery.status === "succeeded" || delivery.status === "failed" || delivery.endpoint.deletedAt) {
    return { kind: "nothing_to_do" };
  }

  const startedAt = new Date();
  const record = async (outcome: AttemptOutcome, statusCode: number | null) => {
    const now = new Date();
    const delay = outcome.kind === "retry" && !outcome.final ? retryDelayMs(deps.config, attempt.number) : -1;
    const status = outcome.kind === "succeeded" ? "succeeded" : outcome.kind === "retry" && !outcome.final ? "retrying" : "failed";
    // Only while still open: a delivery failed meanwhile (its endpoint deleted) keeps that end.
    const { count } = await deps.db.webhookDelivery.updateMany({
      where: { id: deliveryId, status: { in: ["pending", "retrying"] } },
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
    if (res.status >= 200 && res.status < 300) return record({ kind: "succeeded", statusCode: res.status }, res.status);
    return record({ kind: "retry", error: `the endpoint answered HTTP ${res.status}`, final: attempt.last }, res.status);
  } catch (err) {
    if (isOutboundRefusal(err)) {
      return record({ kind: "failed", error: `refused by the outbound address policy: ${(err as Error).message}` }, null);
    }
    return record({ kind: "retry", error: describeFailure(err, timeoutMs), final: attempt.last }, null);
  }
}
