import { hostname } from "node:os";
import { jobCatalog, type Queues } from "../../platform/queues.js";
import { whenReady } from "../../platform/redis.js";
import { type DispatchDeps, dispatchDueRoutines, heartbeatAgeMs } from "./dispatch.js";

/**
 * What makes dispatch passes happen, in the worker process. One BullMQ job scheduler
 * (`routines-dispatch`, visible in bull-board on the `routines` queue) produces a
 * `routines.tick.v1` job every ROUTINE_TICK_MS; whichever worker takes it runs a dispatch pass.
 * The schedule itself is in PostgreSQL, so ticks only say "look now": a duplicate tick finds
 * nothing due, and a lost one delays dispatch by one tick.
 *
 * BullMQ's job schedulers have known failure modes (several instances upserting at start-up
 * leaving no job scheduled, a removal followed by an upsert creating nothing, a second instance
 * stopping an `every` scheduler), so each worker process also watches the dispatcher's heartbeat:
 * when no pass has finished for STALE_TICKS ticks, it runs a pass itself and upserts the job
 * scheduler again. Start-up upserts only when the scheduler is missing or differs, so a fleet
 * starting together does not upsert in quick succession.
 */
export const TICK_SCHEDULER_ID = "routines-dispatch";
export const STALE_TICKS = 3;

export async function ensureTickScheduler(queues: Queues, tickMs: number, options: { force?: boolean } = {}): Promise<boolean> {
  // A BullMQ Queue first used while its connection is not ready keeps its failed start for good
  // (the producer connection does not queue commands), so the queue is only made once it is.
  if (!(await whenReady(queues.connection, 2000))) throw new Error("Redis is not reachable; the routines job scheduler waits for it");
  const queue = queues.get("routines");
  if (!options.force) {
    const existing = await queue.getJobScheduler(TICK_SCHEDULER_ID);
    if (existing && existing.every === tickMs) return false;
  }
  const { options: opts } = jobCatalog["routines.tick.v1"];
  await queue.upsertJobScheduler(
    TICK_SCHEDULER_ID,
    { every: tickMs },
    // Completed ticks are removed at once: a finished tick's id can then never stop the
    // scheduler from adding the next one.
    { name: "routines.tick.v1", data: {}, opts: { ...opts, removeOnComplete: true } },
  );
  return true;
}

export interface RoutineScheduler {
  close: () => Promise<void>;
}

export function startRoutineScheduler(deps: DispatchDeps, options: { tickMs?: number; seenBy?: string } = {}): RoutineScheduler {
  const { config, logger } = deps;
  const tickMs = options.tickMs ?? config.ROUTINE_TICK_MS;
  if (!config.ROUTINES_ENABLED) {
    whenReady(deps.queues.connection, 5000)
      .then((ready) => (ready ? deps.queues.get("routines").removeJobScheduler(TICK_SCHEDULER_ID) : false))
      .catch((err: unknown) => logger.warn({ err }, "could not remove the routines job scheduler"));
    logger.info("routines are switched off (ROUTINES_ENABLED=false); no dispatch");
    return { close: async () => {} };
  }
  const seenBy = options.seenBy ?? `${hostname()}:${process.pid}`;

  const watch = async () => {
    const age = await heartbeatAgeMs(deps.db);
    if (age !== null && age <= STALE_TICKS * tickMs) return;
    if (age !== null)
      logger.warn({ ageMs: Math.round(age) }, "no routine dispatch pass lately; dispatching here and upserting the job scheduler");
    await dispatchDueRoutines(deps, { seenBy });
    await ensureTickScheduler(deps.queues, tickMs, { force: age !== null });
  };

  let running: Promise<void> | undefined;
  let stopped = false;
  const run = () => {
    if (running || stopped) return;
    running = watch()
      .catch((err: unknown) => logger.warn({ err }, "routine watchdog failed"))
      .finally(() => {
        running = undefined;
      });
  };
  running = ensureTickScheduler(deps.queues, tickMs)
    .then(() => undefined)
    .catch((err: unknown) => logger.warn({ err }, "could not upsert the routines job scheduler; the watchdog retries"))
    .finally(() => {
      running = undefined;
    });
  const timer = setInterval(run, tickMs);
  timer.unref();

  return {
    close: async () => {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}
