import { setTimeout as sleep } from "node:timers/promises";

/**
 * Background deletions (an entity's originals, an author's erasure, the retention pass) run batch after
 * batch for minutes on the same database and worker cores that other tenants' requests use. After each
 * batch the runner rests `factor` times as long as the batch took (DELETION_PAUSE_FACTOR): with 1, the
 * deletion is busy at most half of its wall-clock time, so its share of the machine stays bounded
 * whatever the batch's cost, and a slower machine slows the deletion rather than everyone else. 0 runs
 * batches back to back. The rest is capped at `maxMs` so one slow batch (a lock wait) does not stall
 * the run for long.
 */
export interface Pace {
  factor: number;
  maxMs?: number;
}

export async function restAfter(pace: Pace, batchMs: number): Promise<void> {
  if (pace.factor <= 0 || batchMs <= 0) return;
  await sleep(Math.min(batchMs * pace.factor, pace.maxMs ?? 5_000));
}
