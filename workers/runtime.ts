import { type Job, MetricsTime, UnrecoverableError, Worker } from "bullmq";
import type { AppDeps } from "../src/platform/deps.js";
import { toError } from "../src/platform/errors.js";
import { type JobName, type JobPayload, jobCatalog, parseJobPayload, type QueueName } from "../src/platform/queues.js";
import { createRedis, type Redis } from "../src/platform/redis.js";

/**
 * Processor runtime: one BullMQ Worker per queue that has processors. Each job's data is
 * parsed against the catalog before its processor sees it; a bad payload fails without
 * retries. Processors throw to retry; they never swallow errors.
 */
export interface ProcessorContext {
  deps: AppDeps;
  job: Job;
}
export type Processor<N extends JobName> = ((payload: JobPayload<N>, ctx: ProcessorContext) => Promise<unknown>) & {
  /** For catalog options `backoff: { type: "custom" }`: ms before the next attempt after `attemptsMade` failed ones; -1 ends the job. */
  retryDelay?: (attemptsMade: number, deps: AppDeps) => number;
};
export type ProcessorTable = { [N in JobName]?: Processor<N> };

export interface WorkerHandles {
  workers: Worker[];
  connection: Redis;
  close: () => Promise<void>;
}

export function startWorkers(
  deps: AppDeps,
  processors: ProcessorTable,
  options: { concurrency?: number; queues?: QueueName[]; lockDuration?: number; stalledInterval?: number } = {},
): WorkerHandles {
  const connection = createRedis(deps.config.REDIS_URL, "worker", "worker");
  const byQueue = new Map<QueueName, JobName[]>();
  for (const name of Object.keys(processors) as JobName[]) {
    const queue = jobCatalog[name].queue;
    if (options.queues && !options.queues.includes(queue)) continue;
    byQueue.set(queue, [...(byQueue.get(queue) ?? []), name]);
  }

  const workers = [...byQueue.keys()].map((queue) => {
    const worker = new Worker(
      queue,
      async (job: Job) => {
        const name = job.name as JobName;
        const processor = processors[name] as Processor<JobName> | undefined;
        if (!processor) throw new UnrecoverableError(`No processor for job ${job.name} on queue ${queue}`);
        const payload = parseJobPayload(name, job.data);
        try {
          return await processor(payload, { deps, job });
        } catch (err) {
          throw toError(err);
        }
      },
      {
        connection,
        prefix: deps.queues.prefixFor(queue),
        concurrency: options.concurrency ?? deps.config.WORKER_CONCURRENCY,
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
    worker.on("error", (err) => deps.logger.error({ err, queue }, "worker error"));
    worker.on("failed", (job, err) =>
      deps.logger.warn({ queue, jobId: job?.id, name: job?.name, attempts: job?.attemptsMade, err: err.message }, "job failed"),
    );
    return worker;
  });

  return {
    workers,
    connection,
    close: async () => {
      await Promise.allSettled(workers.map((w) => w.close()));
      connection.disconnect();
    },
  };
}
