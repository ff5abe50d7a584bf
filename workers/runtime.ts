import { type Job, MetricsTime, UnrecoverableError, Worker } from "bullmq";
import { isFinalAttempt, isPermanent } from "../src/jobs/failures.js";
import { type EndedJob, endOf, jobEnded } from "../src/jobs/lifecycle.js";
import { concurrencyOf } from "../src/platform/config.js";
import type { AppDeps } from "../src/platform/deps.js";
import { toError } from "../src/platform/errors.js";
import { type JobName, type JobPayload, jobCatalog, parseJobPayload, type QueueName } from "../src/platform/queues.js";
import { createRedis, type Redis } from "../src/platform/redis.js";
import { reportRedisError } from "../src/platform/redis-errors.js";

/**
 * Processor runtime: one BullMQ Worker per queue that has processors. Each job's data is
 * parsed against the catalog before its processor sees it; a bad payload fails without
 * retries. Processors throw to retry; they never swallow errors. One rule (src/jobs/failures.ts,
 * `isPermanent`) decides for every kind whether a failed attempt is retried: a permanent error (an
 * UnrecoverableError, a cancel, a caller's 4xx, an error marked permanent) ends the job at once. When
 * an attempt fails and no other will follow (the job's last attempt, or a permanent error), the
 * runtime calls the processor's `onLastFailure` before the job moves to failed, so the kind records
 * the failure on its row once, here, rather than in each processor.
 *
 * The runtime also announces each job's end (`jobEnded`: subscribers, webhooks, a waiting workflow
 * run): a kind writes its terminal row and returns, or throws, what it wrote (`endedWith`), and its
 * `onLastFailure` answers the failure it wrote; the runtime announces it once the attempt is over.
 * The kinds never announce their own ends from a worker.
 */
export interface ProcessorContext {
  deps: AppDeps;
  job: Job;
  /** The worker's lock token on the job, for moving it back to delayed (`job.moveToDelayed`). */
  token: string | undefined;
}
export type Processor<N extends JobName> = ((payload: JobPayload<N>, ctx: ProcessorContext) => Promise<unknown>) & {
  /** For catalog options `backoff: { type: "custom" }`: ms before the next attempt after `attemptsMade` failed ones; -1 ends the job. */
  retryDelay?: (attemptsMade: number, deps: AppDeps) => number;
  /** Records the failure on the kind's row and answers the end it wrote (none when the row had ended); its own errors are logged, never thrown. */
  onLastFailure?: (payload: JobPayload<N>, err: Error, ctx: ProcessorContext) => Promise<EndedJob | null | undefined>;
};
export type ProcessorTable = { [N in JobName]?: Processor<N> };

/** A processor with its hooks, typed by its job name: `processor<"sweep.run.v1">(run, { onLastFailure })`. */
export function processor<N extends JobName>(
  run: (payload: JobPayload<N>, ctx: ProcessorContext) => Promise<unknown>,
  hooks: Pick<Processor<N>, "retryDelay" | "onLastFailure"> = {},
): Processor<N> {
  return Object.assign(run, hooks);
}

export interface WorkerHandles {
  workers: Worker[];
  connection: Redis;
  /**
   * Stops taking jobs and waits for the running ones (`drainMs` bounds the wait; `force` does
   * not wait), then closes the connection. A job still running at the bound keeps its queue
   * entry active: once its lock lapses the stalled-job check of any worker runs it again.
   */
  close: (options?: { drainMs?: number; force?: boolean }) => Promise<void>;
}

/** True when the promise settles within `ms`. */
const settledWithin = (promise: Promise<unknown>, ms: number) => {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise.then(() => true),
    new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms))),
  ]).finally(() => clearTimeout(timer));
};

export function startWorkers(
  deps: AppDeps,
  processors: ProcessorTable,
  options: { concurrency?: number; queues?: QueueName[]; lockDuration?: number; stalledInterval?: number } = {},
): WorkerHandles {
  const connection = createRedis(deps.config.REDIS_URL, "worker", "worker", deps.logger);
  const byQueue = new Map<QueueName, JobName[]>();
  const active = new Map<string, { queue: QueueName; id: string | undefined; name: string }>();
  for (const name of Object.keys(processors) as JobName[]) {
    const queue = jobCatalog[name].queue;
    if (options.queues && !options.queues.includes(queue)) continue;
    byQueue.set(queue, [...(byQueue.get(queue) ?? []), name]);
  }

  const workers = [...byQueue.keys()].map((queue) => {
    const worker = new Worker(
      queue,
      async (job: Job, token?: string) => {
        const name = job.name as JobName;
        const processor = processors[name] as Processor<JobName> | undefined;
        if (!processor) throw new UnrecoverableError(`No processor for job ${job.name} on queue ${queue}`);
        const payload = parseJobPayload(name, job.data);
        active.set(`${queue}:${job.id}`, { queue, id: job.id, name: job.name });
        const ctx = { deps, job, token };
        try {
          const result = await processor(payload, ctx);
          const ended = endOf(result);
          if (ended) await jobEnded(deps, ended);
          return result;
        } catch (thrown) {
          const err = toError(thrown);
          const permanent = isPermanent(err);
          let ended: EndedJob | null | undefined | undefined = endOf(thrown);
          if (!ended && processor.onLastFailure && (permanent || isFinalAttempt(job))) {
            ended = await processor.onLastFailure(payload, err, ctx).catch((markErr: unknown) => {
              deps.logger.error({ queue, jobId: job.id, name: job.name, err: markErr }, "could not record the job's failure on its row");
              return undefined;
            });
          }
          if (ended) await jobEnded(deps, ended);
          // BullMQ retries anything but an UnrecoverableError.
          throw permanent && !(err instanceof UnrecoverableError)
            ? Object.assign(new UnrecoverableError(err.message), { cause: err })
            : err;
        } finally {
          active.delete(`${queue}:${job.id}`);
        }
      },
      {
        connection,
        prefix: deps.queues.prefixFor(queue),
        concurrency: options.concurrency ?? concurrencyOf(deps.config, queue),
        // A worker that dies mid-job loses its lock; the job is retried after this long.
        lockDuration: options.lockDuration ?? deps.config.WORKER_LOCK_DURATION_MS,
        stalledInterval: options.stalledInterval ?? deps.config.WORKER_STALLED_INTERVAL_MS,
        // Finished-job counts per minute, kept a week; served at /metrics by the web process.
        metrics: { maxDataPoints: MetricsTime.ONE_WEEK },
        settings: {
          backoffStrategy: (attemptsMade: number, _type?: string, _err?: Error, job?: { name: string }) =>
            (processors[job?.name as JobName] as Processor<JobName> | undefined)?.retryDelay?.(attemptsMade, deps) ?? -1,
        },
      },
    );
    // Connection errors (of its own blocking connection too) and lock errors: rate-limited with the connection's.
    worker.on("error", (err) => reportRedisError(connection, err, { queue }));
    worker.on("failed", (job, err) =>
      deps.logger.warn({ queue, jobId: job?.id, name: job?.name, attempts: job?.attemptsMade, err: err.message }, "job failed"),
    );
    return worker;
  });

  return {
    workers,
    connection,
    close: async ({ drainMs, force = false } = {}) => {
      const closed = Promise.allSettled(workers.map((w) => w.close(force)));
      if (drainMs !== undefined && !force) {
        const deadline = Date.now() + drainMs;
        // Once no job runs, closing should take a moment; with Redis unreachable it would not end.
        while (active.size > 0 && Date.now() < deadline && !(await settledWithin(closed, 50)));
        const remaining = [...active.values()];
        if (remaining.length > 0) {
          deps.logger.warn(
            { drain_ms: drainMs, jobs: remaining },
            "jobs still running at the drain bound are left to the stalled-job check: they run again once their locks lapse",
          );
        } else if (!(await settledWithin(closed, Math.min(2000, Math.max(0, deadline - Date.now()))))) {
          deps.logger.warn("the workers did not close in time (Redis unreachable?); their connections are dropped");
        }
      } else {
        await closed;
      }
      // Disconnecting first means a job cut off here cannot be moved to failed on its way out.
      connection.disconnect();
    },
  };
}
