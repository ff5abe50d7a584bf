import { Redis, type RedisOptions } from "ioredis";

export type { Redis };

/**
 * Producer connections fail fast while Redis is down (no offline queue), so the web
 * process can answer 503 instead of hanging. Worker and subscriber connections wait
 * and retry for ever, as BullMQ's production guide asks.
 */
export function createRedis(url: string, role: "producer" | "worker" | "subscriber", name: string): Redis {
  const options: RedisOptions = {
    connectionName: `res-${name}`,
    lazyConnect: false,
    retryStrategy: (times) => Math.min(100 * 2 ** Math.min(times, 6), 5000),
  };
  if (role === "producer") {
    options.enableOfflineQueue = false;
    options.maxRetriesPerRequest = 1;
    options.connectTimeout = 2000;
  } else {
    options.maxRetriesPerRequest = null;
    options.enableOfflineQueue = true;
  }
  const redis = new Redis(url, options);
  // Connection errors are reported through the health check and the calls that fail;
  // an 'error' listener keeps ioredis from crashing the process on them.
  redis.on("error", () => {});
  return redis;
}

/** True when a thrown value means Redis could not be reached. */
export function isRedisUnavailable(err: unknown): boolean {
  const text = String((err as { message?: string } | null)?.message ?? "");
  return /Stream isn't writeable|enableOfflineQueue|ECONNREFUSED|Connection is closed|Reached the max retries|connect ETIMEDOUT|ECONNRESET/i.test(
    text,
  );
}

/**
 * Waits up to `timeoutMs` for a fail-fast connection to be ready (it may still be
 * connecting just after start-up or a reconnect). Resolves false when it is not.
 */
export async function whenReady(redis: Redis, timeoutMs = 1000): Promise<boolean> {
  if (redis.status === "ready") return true;
  if (redis.status === "end") return false;
  return new Promise((resolve) => {
    const done = (value: boolean) => {
      clearTimeout(timer);
      redis.off("ready", onReady);
      resolve(value);
    };
    const onReady = () => done(true);
    const timer = setTimeout(() => done(false), timeoutMs);
    redis.once("ready", onReady);
  });
}
