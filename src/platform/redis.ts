import { Cluster, type ClusterOptions, type RedisOptions, Redis as SingleRedis } from "ioredis";
import type { Logger } from "./logger.js";
import { logRedisErrors } from "./redis-errors.js";

/** A connection to Redis: one node, or a Redis Cluster (seeds from `redis+cluster://` URLs). */
export type Redis = SingleRedis | Cluster;
export type { Cluster };

export type RedisRole = "producer" | "worker" | "subscriber";

export interface ClusterTarget {
  nodes: { host: string; port: number }[];
  username?: string;
  password?: string;
  tls: boolean;
}

/**
 * Parses `redis+cluster://[user:password@]host:port,host:port` (or `rediss+cluster://` for
 * TLS). Returns undefined for a single-node `redis://` URL.
 */
export function parseClusterUrl(url: string): ClusterTarget | undefined {
  const match = /^(rediss?)\+cluster:\/\/(?:([^@/]*)@)?([^/?#]+)/.exec(url);
  if (!match) return undefined;
  const [, scheme, userinfo, hosts] = match as unknown as [string, string, string | undefined, string];
  const nodes = hosts
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean)
    .map((hostPort) => {
      const at = hostPort.lastIndexOf(":");
      const port = at > 0 ? Number(hostPort.slice(at + 1)) : 6379;
      return { host: at > 0 ? hostPort.slice(0, at) : hostPort, port };
    });
  const target: ClusterTarget = { nodes, tls: scheme === "rediss" };
  if (userinfo) {
    const colon = userinfo.indexOf(":");
    const user = decodeURIComponent(colon >= 0 ? userinfo.slice(0, colon) : "");
    const password = decodeURIComponent(colon >= 0 ? userinfo.slice(colon + 1) : userinfo);
    if (user) target.username = user;
    if (password) target.password = password;
  }
  return target;
}

export function isCluster(redis: Redis): redis is Cluster {
  return (redis as Cluster).isCluster === true;
}

const backoff = (times: number) => Math.min(100 * 2 ** Math.min(times, 6), 5000);

/**
 * Producer connections fail fast while Redis is down (no offline queue), so the web
 * process can answer 503 instead of hanging. Worker and subscriber connections wait
 * and retry for ever, as BullMQ's production guide asks. A `redis+cluster://` URL gives
 * a Cluster client with the same behaviour per role; subscriber clusters use sharded
 * pub/sub (one subscriber connection per master).
 */
export function createRedis(url: string, role: RedisRole, name: string, logger?: Logger): Redis {
  const cluster = parseClusterUrl(url);
  const options: RedisOptions = {
    connectionName: `res-${name}`,
    lazyConnect: false,
    retryStrategy: backoff,
  };
  if (role === "producer") {
    options.enableOfflineQueue = false;
    options.maxRetriesPerRequest = 1;
    options.connectTimeout = 2000;
  } else {
    options.maxRetriesPerRequest = null;
    options.enableOfflineQueue = true;
  }
  const redis = cluster ? createCluster(cluster, role, options) : new SingleRedis(url, options);
  // Errors are logged rate-limited, without secrets (redis-errors.ts); the health check and the
  // calls that fail report them too. Without a logger (benchmarks, tests) they are dropped:
  // an 'error' listener keeps ioredis from crashing the process on them.
  if (logger) logRedisErrors(redis, logger, `${name}:${role}`);
  else redis.on("error", () => {});
  return redis;
}

function createCluster(target: ClusterTarget, role: RedisRole, base: RedisOptions): Cluster {
  const { retryStrategy: _single, enableOfflineQueue, lazyConnect: _lazy, ...nodeOptions } = base;
  const options: ClusterOptions = {
    redisOptions: {
      ...nodeOptions,
      ...(target.username ? { username: target.username } : {}),
      ...(target.password ? { password: target.password } : {}),
      ...(target.tls ? { tls: {} } : {}),
    },
    enableOfflineQueue,
    // Keep trying the seeds while the whole cluster is unreachable (the producer still
    // fails fast: without an offline queue its commands are refused meanwhile).
    clusterRetryStrategy: backoff,
    // A master that fails is replaced by its replica within the cluster's node timeout:
    // commands for its slots are retried (every 200 ms, re-reading the slot map) meanwhile.
    retryDelayOnFailover: 200,
    retryDelayOnClusterDown: 300,
    retryDelayOnTryAgain: 100,
    maxRedirections: role === "producer" ? 16 : 64,
    slotsRefreshTimeout: 2000,
    slotsRefreshInterval: 5000,
    shardedSubscribers: role === "subscriber",
  };
  return new Cluster(target.nodes, options);
}

/** Publishes on a channel: sharded pub/sub (SPUBLISH) on a cluster, PUBLISH on one node. */
export function publish(redis: Redis, channel: string, message: string): Promise<unknown> {
  return isCluster(redis) ? redis.spublish(channel, message) : redis.publish(channel, message);
}

/** Every key matching `pattern`, read with SCAN on each master of a cluster (or the one node). */
export async function scanKeys(redis: Redis, pattern: string): Promise<string[]> {
  const nodes = isCluster(redis) ? redis.nodes("master") : [redis];
  const keys: string[] = [];
  for (const node of nodes) {
    let cursor = "0";
    do {
      const [next, batch] = await node.scan(cursor, "MATCH", pattern, "COUNT", 1000);
      keys.push(...batch);
      cursor = next;
    } while (cursor !== "0");
  }
  return keys;
}

/** Deletes every key matching `pattern` (one slot at a time on a cluster); returns how many. */
export async function deleteKeys(redis: Redis, pattern: string): Promise<number> {
  const keys = await scanKeys(redis, pattern);
  if (isCluster(redis)) {
    const counts = await Promise.all(keys.map((key) => redis.unlink(key)));
    return counts.reduce((a, b) => a + b, 0);
  }
  let deleted = 0;
  for (let i = 0; i < keys.length; i += 500) deleted += await redis.unlink(...keys.slice(i, i + 500));
  return deleted;
}

/** True when a thrown value means Redis could not be reached. */
export function isRedisUnavailable(err: unknown): boolean {
  const text = String((err as { message?: string } | null)?.message ?? "");
  return /Stream isn't writeable|enableOfflineQueue|ECONNREFUSED|Connection is closed|Reached the max retries|connect ETIMEDOUT|ECONNRESET|CLUSTERDOWN|Failed to refresh slots cache|None of startup nodes|Too many Cluster redirections|Cluster is ended|TRYAGAIN/i.test(
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
