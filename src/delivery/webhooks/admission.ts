import type { AppDeps } from "../../platform/deps.js";
import { disabledError, failForDisabled } from "./breaker.js";
import { type OpenDelivery, openDelivery } from "./deliver.js";
import { type HeldSlot, leaseMs, releaseSlot, type SlotRequest, slotsUnlimited, takeSlot } from "./slots.js";

/**
 * Whether a delivery's attempt runs now. Ended, or its endpoint deleted: nothing to do. Its endpoint
 * disabled: the delivery fails. Paused: it waits for the pause's end. Otherwise it takes a slot
 * (slots.ts) for the attempt, or waits for one to be released. Waiting is not an attempt: the
 * delivery's retry schedule does not move.
 *
 * A job that names its endpoint and workspace tries for the slot first, so a delivery that has to
 * wait for one (most of a busy workspace's, every time they are woken) costs no database read.
 */
type Deps = Pick<AppDeps, "db" | "redis" | "config" | "queues" | "logger">;

export type Admission =
  | { kind: "go"; delivery: OpenDelivery; slot: HeldSlot | undefined }
  /** Until when, at the latest; `park`: the slot to be woken for when one is released. */
  | { kind: "wait"; until: number; park: SlotRequest | undefined }
  | { kind: "failed"; error: string }
  | { kind: "nothing_to_do" };

/** A delivery job: its payload and its queue job id (what a release wakes). */
export interface DeliveryJob {
  deliveryId: string;
  jobId: string;
  endpointId?: string | undefined;
  workspaceId?: string | undefined;
}

/** Deliveries that waited for a pause's end arrive spread over this long, not all in one instant. */
const PAUSE_SPREAD_MS = 1000;

/** A release wakes a parked delivery; this bound covers a release that never comes (a worker died holding its lease). */
const waitForSlot = (deps: Pick<Deps, "config">, park: SlotRequest): Admission => ({
  kind: "wait",
  until: Date.now() + leaseMs(deps.config) * (1 + Math.random()),
  park,
});

/** Decides a delivery job's attempt; a `go` holds the slot the attempt must release. */
export async function admit(deps: Deps, job: DeliveryJob): Promise<Admission> {
  const limited = !slotsUnlimited(deps.config);
  let slot: HeldSlot | undefined;
  if (limited && job.endpointId && job.workspaceId) {
    const request = { workspaceId: job.workspaceId, endpointId: job.endpointId, jobId: job.jobId };
    slot = await takeSlot(deps, request);
    if (!slot) return waitForSlot(deps, request);
  }
  let decided: Admission;
  try {
    decided = await decide(deps, job.deliveryId);
  } catch (err) {
    if (slot) await releaseSlot(deps, slot);
    throw err;
  }
  if (decided.kind !== "go") {
    if (slot) await releaseSlot(deps, slot);
    return decided;
  }
  if (slot || !limited) return { ...decided, slot };
  const { endpoint } = decided.delivery;
  const request = { workspaceId: endpoint.workspaceId, endpointId: endpoint.id, jobId: job.jobId };
  slot = await takeSlot(deps, request);
  return slot ? { ...decided, slot } : waitForSlot(deps, request);
}

/** What the delivery's row and its endpoint's state say, before any slot. */
async function decide(deps: Pick<Deps, "db">, deliveryId: string): Promise<Admission> {
  const delivery = await openDelivery(deps, deliveryId);
  if (!delivery) return { kind: "nothing_to_do" };
  const { endpoint } = delivery;
  if (endpoint.state === "disabled") {
    await failForDisabled(deps, delivery.id, endpoint.disabledReason);
    return { kind: "failed", error: disabledError(endpoint.disabledReason) };
  }
  if (endpoint.state === "paused" && endpoint.pausedUntil && endpoint.pausedUntil.getTime() > Date.now()) {
    return { kind: "wait", until: endpoint.pausedUntil.getTime() + Math.random() * PAUSE_SPREAD_MS, park: undefined };
  }
  return { kind: "go", delivery, slot: undefined };
}
