import { DelayedError, UnrecoverableError } from "bullmq";
import { admit } from "../src/delivery/webhooks/admission.js";
import { attemptDelivery } from "../src/delivery/webhooks/deliver.js";
import { maxAttempts, retryDelayMs } from "../src/delivery/webhooks/retry.js";
import { parkForSlot, releaseSlot, wakeJob } from "../src/delivery/webhooks/slots.js";
import type { AppDeps } from "../src/platform/deps.js";
import type { Processor, ProcessorContext } from "./runtime.js";

/**
 * `webhook.deliver.v1`: one attempt of one delivery, once admitted (src/delivery/webhooks/admission.ts: its
 * endpoint neither paused nor disabled, a slot free for it). A delivery that must wait goes back to
 * delayed without using up an attempt. A retryable failure throws so that BullMQ retries on the
 * webhook schedule (`retryDelay`); a final one throws UnrecoverableError.
 */
async function deliver(payload: { deliveryId: string; endpointId?: string; workspaceId?: string }, ctx: ProcessorContext) {
  const { deps, job, token } = ctx;
  const jobId = String(job.id);
  const admission = await admit(deps, { ...payload, jobId });
  if (admission.kind === "nothing_to_do") return admission;
  if (admission.kind === "failed") throw new UnrecoverableError(admission.error);
  if (admission.kind === "wait") {
    // BullMQ counts no attempt for a job moved to delayed that throws DelayedError.
    await job.moveToDelayed(admission.until, token);
    // A slot freed between the try and the park: nobody else will wake this job.
    if (admission.park && (await parkForSlot(deps, admission.park))) await wakeJob(deps, jobId);
    throw new DelayedError();
  }

  const number = job.attemptsMade + 1;
  const last = number >= maxAttempts(deps.config, job.opts.attempts ?? 1);
  const { slot } = admission;
  const outcome = await attemptDelivery(deps, admission.delivery, { number, last }).finally(() =>
    slot ? releaseSlot(deps, slot) : undefined,
  );
  if (outcome.kind === "nothing_to_do" || outcome.kind === "succeeded") return outcome;
  if (outcome.kind === "retry" && !outcome.final) throw new Error(outcome.error);
  throw new UnrecoverableError(outcome.error);
}

export const webhookDeliverProcessor: Processor<"webhook.deliver.v1"> = Object.assign(deliver, {
  retryDelay: (attemptsMade: number, deps: AppDeps) => retryDelayMs(deps.config, attemptsMade),
});
