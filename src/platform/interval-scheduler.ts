import type { AppDeps } from "./deps.js";
import { type JobName, jobCatalog, type Queues } from "./queues.js";
import { whenReady } from "./redis.js";

/**
 * A BullMQ job scheduler that produces one job every `everyMs` (visible in bull-board on its job's
 * queue). For passes whose work PostgreSQL decides (what is due, what exists), so a duplicate tick
 * finds little to do and a lost one delays the pass by an interval. Start-up upserts only when the
 * scheduler is missing or has another `every` (a fleet starting together does not upsert in quick
 * succession); `everyMs` 0 removes it.
 */
export interface IntervalSchedule {
  /** The job scheduler's id. */
  id: string;
  /** The job it produces (its queue and options come from the job catalog). */
  job: JobName;
  /** What it is, for the log. */
  what: string;
}

export async function ensureIntervalScheduler(queues: Queues, schedule: IntervalSchedule, everyMs: number): Promise<boolean> {
  // A BullMQ Queue first used while its connection is not ready keeps its failed start for good.
  if (!(await whenReady(queues.connection, 2000)))
    throw new Error(`Redis is not reachable; the ${schedule.what} job scheduler waits for it`);
  const { queue: queueName, options } = jobCatalog[schedule.job];
  const queue = queues.get(queueName);
  if (everyMs === 0) return queue.removeJobScheduler(schedule.id);
  const existing = await queue.getJobScheduler(schedule.id);
  if (existing && existing.every === everyMs) return false;
  await queue.upsertJobScheduler(schedule.id, { every: everyMs }, { name: schedule.job, data: {}, opts: options });
  return true;
}

/** Upserts the scheduler in the background at worker start, retrying every minute until Redis answers. */
export function startIntervalScheduler(
  deps: Pick<AppDeps, "queues" | "logger">,
  schedule: IntervalSchedule,
  everyMs: number,
): { close: () => Promise<void> } {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const attempt = () => {
    ensureIntervalScheduler(deps.queues, schedule, everyMs).catch((err: unknown) => {
      deps.logger.warn({ err }, `could not upsert the ${schedule.what} job scheduler; retrying in a minute`);
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
