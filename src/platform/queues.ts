import { createHash } from "node:crypto";
import { type JobsOptions, Queue, UnrecoverableError } from "bullmq";
import { z } from "zod";
import { AppError } from "./errors.js";
import { QUEUE_NAMES, type QueueName } from "./queue-names.js";
import { createRedis, isCluster, isRedisUnavailable, type Redis, whenReady } from "./redis.js";
import { reportRedisError } from "./redis-errors.js";

/**
 * The job catalog: every job name, its queue, its payload schema and its retry policy,
 * defined once and shared by the producers (web) and the processors (worker).
 * Payloads carry ids, not rows, and may only change in ways that still accept jobs
 * queued before a deploy.
 */
export { QUEUE_NAMES, type QueueName } from "./queue-names.js";

/** Stored rows a job works on: ids of content_store, a bounded chunk of them. */
const ContentIds = z.object({ contentIds: z.array(z.uuid()).min(1).max(5000) });

const retry = (attempts: number, delay: number): JobsOptions => ({
  attempts,
  backoff: { type: "exponential", delay },
});

export const jobCatalog = {
  "collection.run.v1": {
    queue: "collection",
    schema: z.object({ jobId: z.uuid() }),
    options: retry(5, 2000),
  },
  "analysis.run.v1": {
    queue: "analysis",
    schema: z.object({ analysisId: z.uuid() }),
    options: retry(3, 1000),
  },
  "enrichment.content.v1": {
    queue: "enrichment",
    schema: ContentIds,
    options: retry(5, 1000),
  },
  "enrichment.reanalyse.v1": {
    queue: "enrichment",
    // Stored rows analysed again by the current analyser (src/insights/enrichment/reanalyse.ts), queued by the
    // `reanalyse` operator command. Behind new rows' enrichment: a job without a priority comes first.
    schema: ContentIds,
    options: { ...retry(5, 1000), priority: 100, removeOnComplete: true, removeOnFail: { count: 1000 } },
  },
  "enrichment.kinds.v1": {
    queue: "enrichment",
    // One tracker's unlabelled sources read by the feedback-kind model adapted to its labelled ones
    // (src/insights/enrichment/kind-adaptation.ts), queued by enrichment and re-analysis. Behind new rows' enrichment.
    schema: z.object({ entityId: z.uuid(), platform: z.string().min(1).max(64), repository: z.string().min(1).max(300).nullable() }),
    options: { ...retry(3, 2000), priority: 50, removeOnComplete: true, removeOnFail: { count: 1000 } },
  },
  "notes.sync.v1": {
    queue: "notes-sync",
    // `credential` is the provider key sealed with the service's secrets key, never clear text.
    // The job (and with it the sealed credential) is removed from Redis as soon as it ends.
    schema: z.object({ syncId: z.uuid(), credential: z.string().min(1) }),
    options: { ...retry(3, 500), removeOnComplete: true, removeOnFail: true },
  },
  "sweep.run.v1": {
    queue: "enrichment",
    // An evidence capture run (POST /api/sweeps/run): enrichment of an entity's newly stored originals.
    // The run's row keeps its state; the job is removed when it ends. A retry of a failed run under its
    // key is a new run (the key's next attempt) with its own job id.
    schema: z.object({ runId: z.uuid() }),
    options: { ...retry(5, 1000), removeOnComplete: true, removeOnFail: true },
  },
  "erasure.run.v1": {
    queue: "enrichment",
    // An author erasure too large to finish within its request: its originals are deleted in batches,
    // each one transaction; the erasure's row and its item list are the record, so a retry resumes.
    schema: z.object({ erasureId: z.uuid() }),
    options: { ...retry(5, 2000), removeOnComplete: true, removeOnFail: true },
  },
  "entity.delete.v1": {
    queue: "enrichment",
    // An entity's deletion (src/governance/deletion/entity-run.ts): its originals in batches, each one transaction, then
    // the entity. The deletion's row holds status and counters, so a retry resumes where it stopped.
    schema: z.object({ deletionId: z.uuid() }),
    options: { ...retry(5, 2000), removeOnComplete: true, removeOnFail: true },
  },
  "project.delete.v1": {
    queue: "enrichment",
    // A project's deletion (src/governance/deletion/project-run.ts): each of its entities through the entity deletion, then the
    // project's own analyses and records in one transaction. Progress lives on the deletion rows, so a retry resumes.
    schema: z.object({ deletionId: z.uuid() }),
    options: { ...retry(5, 2000), removeOnComplete: true, removeOnFail: true },
  },
  "retention.tick.v1": {
    queue: "enrichment",
    // Produced by the retention job scheduler (src/governance/deletion/scheduler.ts): purges deleted workspaces whose grace
    // period is over, then applies every workspace's retention_days. Each step is resumable; a lost tick waits for the next.
    schema: z.object({}),
    options: { attempts: 1, removeOnComplete: true, removeOnFail: { count: 100 } },
  },
  "search.recent-index.v1": {
    queue: "enrichment",
    // Produced by the search index job scheduler (src/insights/search/scheduler.ts): builds the full-text index of
    // the newest stored originals when it is due (src/insights/search/recent-index.ts). A lost tick waits for the next.
    schema: z.object({}),
    options: { attempts: 1, removeOnComplete: true, removeOnFail: { count: 100 } },
  },
  "embeddings.reembed.v1": {
    queue: "enrichment",
    // Stored vectors of another model than the current one, embedded again (src/insights/embed/reembed.ts), queued by
    // `npm run admin -- reembed`. The rows are the record (a row is done once its model is current), so a retry resumes.
    schema: z.object({}),
    options: { ...retry(5, 5000), removeOnComplete: true, removeOnFail: { count: 20 } },
  },
  "context.embed.v1": {
    queue: "enrichment",
    // A saved page whose embedding could not be computed at save time.
    schema: z.object({ pageId: z.uuid() }),
    options: retry(8, 2000),
  },
  "workflow.run.v1": {
    queue: "workflow-run",
    schema: z.object({ runId: z.uuid() }),
    options: retry(3, 2000),
  },
  "routines.tick.v1": {
    queue: "routines",
    // Produced by the routines job scheduler: one dispatch pass over the due routines. The
    // routines themselves live in PostgreSQL, so a lost or repeated tick changes nothing.
    schema: z.object({}),
    options: { attempts: 1, removeOnComplete: { count: 100 }, removeOnFail: { count: 500 } },
  },
  "webhook.deliver.v1": {
    queue: "webhooks",
    // One delivery of a webhook message to one endpoint; the row holds the message and its attempts.
    // Delays come from the processor's retry schedule (src/delivery/webhooks/retry.ts): about 27.6 hours in all.
    // endpointId and workspaceId let a delivery wait for a slot (src/delivery/webhooks/slots.ts) without reading
    // its row; a job queued without them reads it first.
    schema: z.object({ deliveryId: z.uuid(), endpointId: z.uuid().optional(), workspaceId: z.uuid().optional() }),
    options: { attempts: 10, backoff: { type: "custom" } },
  },
} as const satisfies Record<string, { queue: QueueName; schema: z.ZodType; options: JobsOptions }>;

export type JobName = keyof typeof jobCatalog;
export type JobPayload<N extends JobName> = z.infer<(typeof jobCatalog)[N]["schema"]>;

/**
 * A BullMQ job id derived from stable parts (caller, idempotency key, ...). BullMQ
 * refuses custom ids that contain ':' or are integers; a prefixed hex digest is neither.
 */
export function deriveJobId(kind: string, ...parts: string[]): string {
  const digest = createHash("sha256").update(parts.join("\u0000")).digest("hex").slice(0, 40);
  return `${kind}-${digest}`;
}

/** Parses a job's data against its catalog schema; a bad payload fails without retries. */
export function parseJobPayload<N extends JobName>(name: N, data: unknown): JobPayload<N> {
  const entry = jobCatalog[name];
  if (!entry) throw new UnrecoverableError(`Unknown job name ${String(name)}`);
  const parsed = entry.schema.safeParse(data);
  if (!parsed.success) throw new UnrecoverableError(`Invalid payload for ${name}: ${parsed.error.message}`);
  return parsed.data as JobPayload<N>;
}

/**
 * The BullMQ prefix of one queue. On one node it is REDIS_PREFIX itself (the key names
 * existing deployments have). On a Redis Cluster every key of a queue must sit in one
 * slot, so the queue's name is added as a hash tag: `res:{collection}` gives keys
 * `res:{collection}:collection:*`, one slot per queue, queues spread over the slots,
 * and every key still starts with `REDIS_PREFIX:`.
 */
export function queuePrefix(prefix: string, queue: string, cluster: boolean): string {
  return cluster ? `${prefix}:{${queue}}` : prefix;
}

export class Queues {
  readonly connection: Redis;
  readonly prefix: string;
  private readonly queues = new Map<QueueName, Queue>();
  private readonly ownsConnection: boolean;

  constructor(options: { redisUrl: string; prefix: string } | { connection: Redis; prefix: string }) {
    this.prefix = options.prefix;
    if ("connection" in options) {
      this.connection = options.connection;
      this.ownsConnection = false;
    } else {
      this.connection = createRedis(options.redisUrl, "producer", "queues");
      this.ownsConnection = true;
    }
  }

  get(name: QueueName): Queue {
    let queue = this.queues.get(name);
    if (!queue) {
      queue = new Queue(name, { connection: this.connection, prefix: this.prefixFor(name), skipWaitingForReady: true });
      // Errors of the shared connection, logged once through its reporter (redis-errors.ts).
      queue.on("error", (err) => reportRedisError(this.connection, err, { queue: name }));
      this.queues.set(name, queue);
    }
    return queue;
  }

  /** The BullMQ prefix of a queue on this connection (see `queuePrefix`); workers use the same. */
  prefixFor(name: QueueName): string {
    return queuePrefix(this.prefix, name, isCluster(this.connection));
  }

  all(): Queue[] {
    return QUEUE_NAMES.map((n) => this.get(n));
  }

  /**
   * 503 unless the queue's Redis is ready within a second: checked before a transaction that stages
   * a job (src/jobs/outbox.ts), so a request made while the queue is down changes nothing.
   */
  async assertAvailable(): Promise<void> {
    if (await whenReady(this.connection, 1000)) return;
    throw new AppError("service_unavailable", "The job queue is unavailable; try again shortly.", { headers: { "Retry-After": "5" } });
  }

  /** Validates the payload and adds the job; Redis being down becomes a 503. */
  async enqueue<N extends JobName>(name: N, payload: JobPayload<N>, opts: { jobId?: string; delay?: number } = {}) {
    const entry = jobCatalog[name];
    const data = entry.schema.parse(payload);
    try {
      await whenReady(this.connection, 1000);
      return await this.get(entry.queue).add(name, data, {
        removeOnComplete: { age: 24 * 3600, count: 10000 },
        removeOnFail: { age: 7 * 24 * 3600 },
        ...entry.options,
        ...(opts.jobId ? { jobId: opts.jobId } : {}),
        ...(opts.delay ? { delay: opts.delay } : {}),
      });
    } catch (err) {
      if (isRedisUnavailable(err) || this.connection.status !== "ready") {
        throw new AppError("service_unavailable", "The job queue is unavailable; try again shortly.", {
          cause: err,
          headers: { "Retry-After": "5" },
        });
      }
      throw err;
    }
  }

  async close(): Promise<void> {
    await Promise.allSettled([...this.queues.values()].map((q) => q.close()));
    if (this.ownsConnection) this.connection.disconnect();
  }
}
