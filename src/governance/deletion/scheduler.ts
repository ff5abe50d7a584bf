import type { AppDeps } from "../../platform/deps.js";
import { ensureIntervalScheduler, type IntervalSchedule, startIntervalScheduler } from "../../platform/interval-scheduler.js";
import type { Queues } from "../../platform/queues.js";

/**
 * The retention pass's tick: one BullMQ job scheduler (`retention-pass`, on the `enrichment` queue,
 * visible in bull-board) produces a `retention.tick.v1` job every RETENTION_INTERVAL_MS. The work itself
 * is decided by PostgreSQL (workspaces due for purging, retention settings), so a duplicate tick finds
 * little to do and a lost one delays the pass by an interval. RETENTION_INTERVAL_MS=0 removes it.
 */
export const RETENTION_SCHEDULER_ID = "retention-pass";
const schedule: IntervalSchedule = { id: RETENTION_SCHEDULER_ID, job: "retention.tick.v1", what: "retention" };

export function ensureRetentionScheduler(queues: Queues, everyMs: number): Promise<boolean> {
  return ensureIntervalScheduler(queues, schedule, everyMs);
}

/** Upserts the scheduler in the background at worker start, retrying until Redis answers. */
export function startRetentionScheduler(deps: Pick<AppDeps, "queues" | "config" | "logger">): { close: () => Promise<void> } {
  return startIntervalScheduler(deps, schedule, deps.config.RETENTION_INTERVAL_MS);
}
