import type { AppDeps } from "../../platform/deps.js";
import { jobCatalog, type Queues } from "../../platform/queues.js";
import { whenReady } from "../../platform/redis.js";

/**
 * The retention pass's tick: one BullMQ job scheduler (`retention-pass`, on the `enrichment` queue,
 * visible in bull-board) produces a `retention.tick.v1` job every RETENTION_INTERVAL_MS. The work itself
 * is decided by PostgreSQL (workspaces due for purging, retention settings), so a duplicate tick finds
 * little to do and a lost one delays the pass by an interval. Start-up upserts only when the scheduler is
 * missing or has another `every` (a fleet starting together does not upsert in quick succession);
 * RETENTION_INTERVAL_MS=0 removes it.
 */
export const RETENTION_SCHEDULER_ID = "retention-pass";

export async function ensureRetentionScheduler(queues: Queues, everyMs: number): Promise<boolean> {
  if (!(await whenReady(queues.connection, 2000))) throw new Error("Redis is not reachable; the retention job scheduler waits for it");
  const queue = queues.get("enrichment");
  if (everyMs === 0) return queue.removeJobScheduler(RETENTION_SCHEDULER_ID);
  const existing = await queue.getJobScheduler(RETENTION_SCHEDULER_ID);
  if (existing && existing.every === everyMs) return false;
  const { options } = jobCatalog["retention.tick.v1"];
  await queue.upsertJobScheduler(RETENTION_SCHEDULER_ID, { every: everyMs }, { name: "retention.tick.v1", data: {}, opts: options });
  return true;
}

/** Upserts the scheduler in the background at worker start, retrying until Redis answers. */
export function startRetentionScheduler(deps: Pick<AppDeps, "queues" | "config" | "logger">): { close: () => Promise<void> } {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const attempt = () => {
    ensureRetentionScheduler(deps.queues, deps.config.RETENTION_INTERVAL_MS).catch((err: unknown) => {
      deps.logger.warn({ err }, "could not upsert the retention job scheduler; retrying in a minute");
      if (!stopped) {
        timer = setTimeout(attempt, 60_000);
        timer.unref();
      }
    });
  };
  attempt();
  return {
    close: async () => {
      stopped = true;
      if (timer) clearTimeout(timer);
    },
  };
}
