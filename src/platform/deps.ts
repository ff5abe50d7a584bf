import { readFileSync } from "node:fs";
import path from "node:path";
import type pg from "pg";
import type { Config } from "./config.js";
import { createDatabase, type Db } from "./db.js";
import { createLogger, type Logger } from "./logger.js";
import { projectRoot } from "./paths.js";
import { PubSub } from "./pubsub.js";
import { Queues } from "./queues.js";
import { createRedis, type Redis } from "./redis.js";
import { createReadRouting, type ReadRouting } from "./replicas.js";

/** Everything a process shares: built once at start-up, closed once at shutdown. */
export interface AppDeps {
  config: Config;
  /** The primary: every write, and every read not routed by `reads`. */
  db: Db;
  /** The driver's pool under `db` (the same connections), for `COPY`: the ingest's new rows. */
  pool: pg.Pool;
  /** Replica reads: the handle a stale-tolerant read route uses for its caller (src/platform/replicas.ts). */
  reads: ReadRouting;
  /** Producer connection: fails fast while Redis is down. */
  redis: Redis;
  queues: Queues;
  /** The process's one shared subscriber connection (opened on first subscribe). */
  pubsub: PubSub;
  logger: Logger;
  version: string;
}

export const SERVICE_VERSION: string = (JSON.parse(readFileSync(path.join(projectRoot(), "package.json"), "utf8")) as { version: string })
  .version;

export function createDeps(config: Config, processName: string): AppDeps {
  const logger = createLogger(config.LOG_LEVEL, processName);
  const redis = createRedis(config.REDIS_URL, "producer", processName, logger);
  const { db, pool } = createDatabase(config.DATABASE_URL, config.DATABASE_POOL_SIZE, {
    namedStatements: config.DATABASE_NAMED_STATEMENTS,
  });
  return {
    config,
    db,
    pool,
    reads: createReadRouting({ primary: db, redis, logger, config }),
    redis,
    queues: new Queues({ connection: redis, prefix: config.REDIS_PREFIX }),
    pubsub: new PubSub(config.REDIS_URL, processName, logger),
    logger,
    version: SERVICE_VERSION,
  };
}

export async function closeDeps(deps: AppDeps): Promise<void> {
  await deps.queues.close();
  await deps.pubsub.close();
  await deps.reads.close();
  await deps.db.$disconnect(); // and with it the pool
  deps.redis.disconnect();
}
