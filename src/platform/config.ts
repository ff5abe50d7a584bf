import { availableParallelism } from "node:os";
import { z } from "zod";
import { createLogger } from "./logger.js";
import { QUEUE_NAMES, type QueueName } from "./queue-names.js";

/**
 * Every environment variable the service reads, parsed once at start-up.
 * Nothing else in the code base reads `process.env`.
 */
const boolish = z.enum(["true", "false", "1", "0", "yes", "no"]).transform((v) => v === "true" || v === "1" || v === "yes");

const optionalUrl = z.url().optional();

export const EnvironmentSchema = z
  .object({
    NODE_ENV: z.enum(["development", "test", "production"]).default("development"),
    PORT: z.coerce.number().int().min(0).max(65535).default(3000),
    HOST: z.string().default("0.0.0.0"),
    PUBLIC_BASE_URL: optionalUrl,
    DATABASE_URL: z
      .string()
      .regex(/^postgres(ql)?:\/\//, "must be a postgresql:// connection URL")
      .default("postgresql://postgres@127.0.0.1:5432/research_evidence"),
    DATABASE_POOL_SIZE: z.coerce.number().int().min(1).max(200).default(10),
    /** Hot-path statements as named prepared statements (off behind a PgBouncer older than 1.21 in transaction mode). */
    DATABASE_NAMED_STATEMENTS: boolish.default(true),
    /** Ingest batches a process writes at once; the others wait in the process (src/intake/ingest/writers.ts). */
    INGEST_WRITERS: z.coerce.number().int().min(1).max(64).default(2),
    // Streaming replicas for the routes that read from one (src/platform/replicas.ts); the
    // caller's own reads stay on the primary for DATABASE_PRIMARY_AFTER_WRITE_MS after it writes.
    DATABASE_REPLICA_URLS: z
      .string()
      .regex(/^\s*postgres(ql)?:\/\/[^\s,]+\s*(,\s*postgres(ql)?:\/\/[^\s,]+\s*)*$/, "must be comma-separated postgresql:// URLs")
      .transform((s) => s.split(",").map((u) => u.trim()))
      .optional(),
    DATABASE_PRIMARY_AFTER_WRITE_MS: z.coerce.number().int().min(0).max(600_000).default(5000),
    // A replica further behind the primary than this (or not answering) is skipped until it catches up.
    DATABASE_REPLICA_MAX_LAG_MS: z.coerce.number().int().min(0).max(3_600_000).default(5000),
    DATABASE_REPLICA_CHECK_MS: z.coerce.number().int().min(100).max(60_000).default(1000),
    // redis://host:port for one node; redis+cluster://host:port,host:port (rediss+cluster:// for TLS)
    // for a Redis Cluster, or REDIS_CLUSTER_NODES with the seeds (credentials and TLS from REDIS_URL).
    REDIS_URL: z
      .string()
      .regex(/^rediss?(\+cluster)?:\/\//, "must be a redis:// or redis+cluster:// URL")
      .default("redis://127.0.0.1:6379"),
    REDIS_CLUSTER_NODES: z
      .string()
      .regex(/^\s*[^\s,]+:\d+\s*(,\s*[^\s,]+:\d+\s*)*$/, "must be comma-separated host:port seeds")
      .optional(),
    REDIS_PREFIX: z.string().min(1).max(100).default("res"),
    AUTH_JWT_SECRET: z.string().min(16, "must be at least 16 characters").optional(),
    AUTH_JWKS_URL: optionalUrl,
    AUTH_ISSUER: z.string().min(1).optional(),
    AUTH_AUDIENCE: z.string().min(1).optional(),
    ADMIN_USER: z.string().min(1).optional(),
    ADMIN_PASSWORD: z.string().min(8, "must be at least 8 characters").optional(),
    BODY_LIMIT: z.string().default("10mb"),
    LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
    WORKER_CONCURRENCY: z.coerce.number().int().min(1).max(256).default(4),
    // Threads a worker process analyses enrichment chunks on beside its own (enrichThreadsOf): unset, one
    // fewer than the cores it may use in production and none otherwise; 0 analyses every chunk inline.
    ENRICH_THREADS: z.coerce.number().int().min(0).max(64).optional(),
    // Rows an enrichment job reads, analyses and writes at a time: more is cheaper for PostgreSQL per row, costs the worker more memory.
    ENRICH_CHUNK_ROWS: z.coerce.number().int().min(1).max(1000).default(200),
    // Per-queue exceptions to WORKER_CONCURRENCY, e.g. "webhooks=32,analysis=2".
    WORKER_QUEUE_CONCURRENCY: z
      .string()
      .default("")
      .superRefine((value, ctx) => {
        for (const problem of queueConcurrency(value).problems) ctx.addIssue({ code: "custom", message: problem });
      }),
    // A worker that dies mid-job stops renewing the job's lock; after the lock lapses the
    // next stalled-job check (every WORKER_STALLED_INTERVAL_MS) hands the job to another worker.
    WORKER_LOCK_DURATION_MS: z.coerce.number().int().min(500).max(600_000).default(30_000),
    WORKER_STALLED_INTERVAL_MS: z.coerce.number().int().min(500).max(600_000).default(15_000),
    SECRETS_KEY: z.string().min(16, "must be at least 16 characters").optional(),
    MEETINGNOTES_TIMEOUT_MS: z.coerce.number().int().min(100).max(120000).default(10000),
    NOTES_SYNC_WAIT_MS: z.coerce.number().int().min(0).max(30000).default(5000),
    SWEEP_WAIT_MS: z.coerce.number().int().min(0).max(30000).default(5000),
    // Author erasures (src/governance/deletion): at most this many of the author's originals are deleted within the
    // request (200); more are deleted by a job (202), this many originals per transaction.
    ERASURE_SYNC_LIMIT: z.coerce.number().int().min(0).max(100_000).default(500),
    ERASURE_BATCH_SIZE: z.coerce.number().int().min(1).max(10_000).default(200),
    // Entity deletions, erasure jobs and the retention pass rest this many times as long as each batch
    // took before the next one (src/governance/deletion/pace.ts): 1 keeps them busy at most half the time, so other
    // tenants' requests keep their latency; 0 runs batches back to back.
    DELETION_PAUSE_FACTOR: z.coerce.number().min(0).max(20).default(1),
    // Workspace deletion and retention (src/governance/deletion/workspaces.ts, retention.ts): a deleted workspace is
    // purged this many hours after its owner deleted it (restorable until then; fractions are for tests);
    // the retention pass (which also purges deleted workspaces that are due) runs every
    // RETENTION_INTERVAL_MS (0: not scheduled), deleting this many originals per transaction.
    WORKSPACE_DELETE_GRACE_HOURS: z.coerce.number().min(0).max(8760).default(168),
    RETENTION_INTERVAL_MS: z.coerce.number().int().min(0).max(86_400_000).default(3_600_000),
    RETENTION_BATCH_SIZE: z.coerce.number().int().min(1).max(10_000).default(200),
    // The full-text index of the newest originals (src/insights/search/recent-index.ts): checked every
    // SEARCH_RECENT_INDEX_INTERVAL_MS (0: not scheduled), built once content_store holds SEARCH_RECENT_INDEX_MIN_ROWS
    // rows, holding about SEARCH_RECENT_INDEX_ROWS of the newest (at least a search window's 500,000).
    SEARCH_RECENT_INDEX_INTERVAL_MS: z.coerce.number().int().min(0).max(86_400_000).default(3_600_000),
    SEARCH_RECENT_INDEX_MIN_ROWS: z.coerce.number().int().min(1).default(2_000_000),
    SEARCH_RECENT_INDEX_ROWS: z.coerce.number().int().min(1).default(1_000_000),
    RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(0).default(600),
    // Share pages (and their event streams) opened per client address per minute; 0: no limit.
    SHARE_PAGES_PER_MINUTE: z.coerce.number().int().min(0).default(120),
    EMBEDDINGS_URL: optionalUrl,
    EMBEDDINGS_API_KEY: z.string().optional(),
    EMBEDDINGS_MODEL: z.string().default("text-embedding-3-small"),
    EMBEDDINGS_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).default(15_000),
    // Threads of one run of the local encoder (src/insights/embed/encoder.ts); concurrent runs use more.
    EMBEDDINGS_THREADS: z.coerce.number().int().min(1).max(64).default(1),
    CONTEXT_VECTOR_CACHE_MB: z.coerce.number().int().min(0).max(65_536).default(256),
    CONTEXT_MIN_SIMILARITY: z.coerce.number().min(-1).max(1).default(0.2),
    LLM_BASE_URL: optionalUrl,
    LLM_API_KEY: z.string().optional(),
    LLM_MODEL: z.string().default("gpt-4o-mini"),
    SEARXNG_URL: optionalUrl,
    SEARCH_PROVIDER_TIMEOUT_MS: z.coerce.number().int().min(100).max(60000).default(8000),
    LLM_TIMEOUT_MS: z.coerce.number().int().min(100).max(300000).default(30000),
    SSE_HEARTBEAT_MS: z.coerce.number().int().min(10).max(300000).default(10000),
    HACKERNEWS_API_URL: z.url().default("https://hn.algolia.com/api/v1"),
    REDDIT_API_URL: z.url().default("https://www.reddit.com"),
    GITHUB_API_URL: z.url().default("https://api.github.com"),
    GITHUB_TOKEN: z.string().optional(),
    MEETINGNOTES_API_URL: z.url().default("https://public-api.granola.ai"),
    COLLECTOR_TIMEOUT_MS: z.coerce.number().int().min(100).default(15000),
    COLLECTOR_MAX_PAGES: z.coerce.number().int().min(1).max(100).default(3),
    COLLECTOR_PAGE_SIZE: z.coerce.number().int().min(1).max(100).default(25),
    COLLECTOR_MAX_COMMENTS: z.coerce.number().int().min(0).max(500).default(50),
    COLLECTOR_REQUESTS_PER_SECOND: z.coerce.number().positive().max(1000).default(2),
    COLLECTOR_RETRIES: z.coerce.number().int().min(0).max(10).default(3),
    COLLECTOR_MAX_RETRY_AFTER_MS: z.coerce.number().int().min(0).default(60000),
    COLLECTOR_ALLOW_PRIVATE_URLS: boolish.default(false),
    TRUST_PROXY: boolish.default(false),
    // Routines (scheduled skill runs). ROUTINE_HOUR_MS is a test setting: the length of an
    // "hour" of a routine's interval, so a test can run a daily routine in seconds.
    ROUTINES_ENABLED: boolish.default(true),
    ROUTINE_HOUR_MS: z.coerce.number().int().min(1).max(3_600_000).default(3_600_000),
    ROUTINE_TICK_MS: z.coerce.number().int().min(50).max(3_600_000).default(30_000),
    // How often the worker sends jobs still staged in the job outbox (src/jobs/outbox.ts).
    OUTBOX_RELAY_MS: z.coerce.number().int().min(50).max(600_000).default(2_000),
    // Outbound webhooks. The retry schedule is multiples of WEBHOOK_RETRY_BASE_MS (5 s: 5 s, 30 s,
    // 2 min, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h); WEBHOOK_MAX_ATTEMPTS can only shorten it.
    WEBHOOK_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).default(10_000),
    WEBHOOK_RETRY_BASE_MS: z.coerce.number().int().min(1).max(60_000).default(5000),
    WEBHOOK_MAX_ATTEMPTS: z.coerce.number().int().min(1).max(10).default(10),
    WEBHOOK_ALLOW_PRIVATE_URLS: boolish.default(false),
    // Fairness and bounds (src/delivery/webhooks/breaker.ts, slots.ts); 0 turns a limit off. Live endpoints per
    // workspace; delivery attempts in flight at once per endpoint and per workspace, across all workers.
    WEBHOOK_MAX_ENDPOINTS: z.coerce.number().int().min(0).max(1000).default(20),
    WEBHOOK_ENDPOINT_CONCURRENCY: z.coerce.number().int().min(0).max(64).default(2),
    WEBHOOK_WORKSPACE_CONCURRENCY: z.coerce.number().int().min(0).max(256).default(4),
    // The circuit breaker: an endpoint failing this many attempts in a row is paused for
    // WEBHOOK_PAUSE_MS, doubling with each further failure up to WEBHOOK_PAUSE_MAX_MS, and disabled
    // after WEBHOOK_DISABLE_AFTER_FAILURES; any success resets it. 0: never paused, never disabled.
    WEBHOOK_PAUSE_AFTER_FAILURES: z.coerce.number().int().min(0).max(1000).default(5),
    WEBHOOK_PAUSE_MS: z.coerce.number().int().min(10).max(86_400_000).default(60_000),
    WEBHOOK_PAUSE_MAX_MS: z.coerce.number().int().min(10).max(86_400_000).default(3_600_000),
    WEBHOOK_DISABLE_AFTER_FAILURES: z.coerce.number().int().min(0).max(100_000).default(50),
  })
  .superRefine((env, ctx) => {
    if (!env.AUTH_JWT_SECRET && !env.AUTH_JWKS_URL) {
      ctx.addIssue({
        code: "custom",
        path: ["AUTH_JWT_SECRET"],
        message: "set AUTH_JWT_SECRET (HS256, local use) or AUTH_JWKS_URL with AUTH_ISSUER and AUTH_AUDIENCE",
      });
    }
    if (env.AUTH_JWKS_URL && (!env.AUTH_ISSUER || !env.AUTH_AUDIENCE)) {
      ctx.addIssue({
        code: "custom",
        path: ["AUTH_ISSUER"],
        message: "AUTH_JWKS_URL needs AUTH_ISSUER and AUTH_AUDIENCE",
      });
    }
    if (env.NODE_ENV === "production" && env.ROUTINE_HOUR_MS !== 3_600_000) {
      ctx.addIssue({ code: "custom", path: ["ROUTINE_HOUR_MS"], message: "is a test setting; leave it unset in production" });
    }
    if (env.WEBHOOK_PAUSE_MAX_MS < env.WEBHOOK_PAUSE_MS) {
      ctx.addIssue({ code: "custom", path: ["WEBHOOK_PAUSE_MAX_MS"], message: "must be at least WEBHOOK_PAUSE_MS" });
    }
    if (env.WEBHOOK_DISABLE_AFTER_FAILURES > 0 && env.WEBHOOK_DISABLE_AFTER_FAILURES <= env.WEBHOOK_PAUSE_AFTER_FAILURES) {
      ctx.addIssue({
        code: "custom",
        path: ["WEBHOOK_DISABLE_AFTER_FAILURES"],
        message: "must be above WEBHOOK_PAUSE_AFTER_FAILURES (or 0: never disable)",
      });
    }
    if ((env.ADMIN_USER === undefined) !== (env.ADMIN_PASSWORD === undefined)) {
      ctx.addIssue({
        code: "custom",
        path: ["ADMIN_PASSWORD"],
        message: "ADMIN_USER and ADMIN_PASSWORD go together",
      });
    }
  })
  .transform((env) => {
    if (!env.REDIS_CLUSTER_NODES) return env;
    // The cluster's seeds; scheme (TLS) and credentials come from REDIS_URL.
    const [, scheme = "redis", userinfo = ""] = /^(rediss?)(?:\+cluster)?:\/\/(?:([^@/]*)@)?/.exec(env.REDIS_URL) ?? [];
    const seeds = env.REDIS_CLUSTER_NODES.split(",").map((s) => s.trim());
    return { ...env, REDIS_URL: `${scheme}+cluster://${userinfo ? `${userinfo}@` : ""}${seeds.join(",")}` };
  });

export type Config = z.infer<typeof EnvironmentSchema>;

/**
 * `WORKER_QUEUE_CONCURRENCY` ("webhooks=32,analysis=2") read as a concurrency per queue, with
 * what is wrong in it. The setting stays a string in the config, so a config can be passed on
 * as an environment as it is.
 */
export function queueConcurrency(value: string): { byQueue: Partial<Record<QueueName, number>>; problems: string[] } {
  const byQueue: Partial<Record<QueueName, number>> = {};
  const problems: string[] = [];
  for (const part of value
    .split(",")
    .map((p) => p.trim())
    .filter(Boolean)) {
    const [, queue = "", n = ""] = /^([^=\s]+)\s*=\s*(\S+)$/.exec(part) ?? [];
    const count = Number(n);
    if (!(QUEUE_NAMES as readonly string[]).includes(queue)) {
      problems.push(`'${part}' names no queue: write queue=number with a queue of ${QUEUE_NAMES.join(", ")}`);
    } else if (!Number.isInteger(count) || count < 1 || count > 256) {
      problems.push(`'${part}': the concurrency must be a whole number from 1 to 256`);
    } else {
      byQueue[queue as QueueName] = count;
    }
  }
  return { byQueue, problems };
}

/**
 * The analysis threads of a worker process's enrichment (src/insights/enrichment/analysis-pool.ts):
 * `ENRICH_THREADS`, else in production one per core the process may use, else none (tests and development
 * analyse inline). The process's own thread mostly waits on the database (it reads, embeds and writes, about a
 * third of a core behind a large import), so a thread per core keeps every core analysing.
 */
export function enrichThreadsOf(config: Pick<Config, "ENRICH_THREADS" | "NODE_ENV">): number {
  if (config.ENRICH_THREADS !== undefined) return config.ENRICH_THREADS;
  return config.NODE_ENV === "production" ? availableParallelism() : 0;
}

/** Queues whose own default concurrency differs from WORKER_CONCURRENCY (WORKER_QUEUE_CONCURRENCY still wins). */
export const QUEUE_DEFAULT_CONCURRENCY: Partial<Record<QueueName, number>> = {
  // Deliveries mostly wait on receivers; a few workspaces' slow endpoints (WEBHOOK_WORKSPACE_CONCURRENCY
  // each) must leave slots free for everyone else's deliveries.
  webhooks: 32,
};

/** How many jobs of a queue one worker process runs at once. */
export function concurrencyOf(config: Pick<Config, "WORKER_CONCURRENCY" | "WORKER_QUEUE_CONCURRENCY">, queue: QueueName): number {
  return queueConcurrency(config.WORKER_QUEUE_CONCURRENCY).byQueue[queue] ?? QUEUE_DEFAULT_CONCURRENCY[queue] ?? config.WORKER_CONCURRENCY;
}

export class ConfigError extends Error {
  override name = "ConfigError";

  /** One `VARIABLE: what is wrong` per problem. */
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  ${p}`).join("\n")}`);
  }
}

/** Parses an environment (default: the process's) and fails with one line per bad variable. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ""));
  const parsed = EnvironmentSchema.safeParse(cleaned);
  if (!parsed.success) {
    throw new ConfigError(parsed.error.issues.map((i) => `${i.path.join(".") || "(environment)"}: ${i.message}`));
  }
  return parsed.data;
}

/**
 * A process's configuration. A bad one ends the process with exit code 1 and, instead of a
 * stack trace (nothing in the code is wrong), names every problem: as one fatal JSON log line
 * for the web and worker processes (`json`), as plain lines on stderr for commands (`text`).
 */
export function configOrExit(
  processName: string,
  env: Record<string, string | undefined> = process.env,
  format: "json" | "text" = "json",
): Config {
  try {
    return loadConfig(env);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    if (format === "text") console.error(`${processName}: ${err.message}`);
    else createLogger("info", processName).fatal({ problems: err.problems }, "invalid configuration: the process cannot start");
    process.exit(1);
  }
}
