import { UnrecoverableError } from "bullmq";
import type { AppDeps } from "../src/platform/deps.js";
import { attemptDelivery } from "../src/webhooks/deliver.js";
import { maxAttempts, retryDelayMs } from "../src/webhooks/retry.js";
import type { Processor, ProcessorContext } from "./runtime.js";

/**
 * `webhook.deliver.v1`: one attempt of one delivery. A retryable failure throws so that BullMQ
 * retries on the webhook schedule (`retryDelay`); a final one throws UnrecoverableError.
 */
async function deliver(payload: { deliveryId: string }, { deps, job }: ProcessorContext) {
  const number = job.attemptsMade + 1;
  const last = number >= maxAttempts(deps.config, job.opts.attempts ?? 1);
  const outcome = await attemptDelivery(deps, payload.deliveryId, { number, last });
  if (outcome.kind === "nothing_to_do" || outcome.kind === "succeeded") return outcome;
  if (outcome.kind === "retry" && !outcome.final) throw new Error(outcome.error);
  throw new UnrecoverableError(outcome.error);
}

export const webhookDeliverProcessor: Processor<"webhook.deliver.v1"> = Object.assign(deliver, {
  retryDelay: (attemptsMade: number, deps: AppDeps) => retryDelayMs(deps.config, attemptsMade),
});
