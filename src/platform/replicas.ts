import type { AuthContext } from "./auth.js";
import type { Config } from "./config.js";
import { createDb, type Db } from "./db.js";
import type { Logger } from "./logger.js";
import type { Redis } from "./redis.js";
import { ReplicaHealth, type ReplicaState } from "./replica-health.js";

/**
 * Read replicas. Glossary: the *primary* takes every write; a *replica* is a streaming
 * standby of it that answers reads a little behind (its replay lag). A *replica read* is a
 * read a route chose to send to a replica because a few seconds of staleness cannot hurt it.
 *
 * Routing is explicit, never blanket: `deps.db` is always the primary, and only the routes
 * that ask `deps.reads.forCaller(auth)` for their handle may read from a replica
 * (docs/operations.md, "Scaling PostgreSQL", lists them). The handle is a replica's own
 * client, so everything a service runs on it goes there: model reads, `$queryRaw` and
 * read-only `$transaction` batches alike.
 *
 * Read-your-writes: every request that may write (any method but GET) marks its caller for
 * `DATABASE_PRIMARY_AFTER_WRITE_MS`, in this process and in Redis (so every web process
 * knows); a marked caller's replica reads go to the primary until the mark lapses. When
 * Redis cannot tell, the read goes to the primary.
 *
 * A replica read goes to a replica picked at random among those that passed their last check
 * (`ReplicaHealth`: answering, still a standby, within `DATABASE_REPLICA_MAX_LAG_MS` of the
 * primary), or to the primary when none did. Checks start with the first replica read, so a
 * process that never routes one (a worker) opens no replica connection.
 */
export interface ReadRouting {
  /** How many replicas are configured (0: every read goes to the primary). */
  readonly replicaCount: number;
  /** The handle for a replica read by this caller: a replica, or the primary (see above). */
  forCaller(auth: AuthContext | undefined): Promise<Db>;
  /** Marks the caller as having written just now (no-op without replicas). */
  noteWrite(auth: AuthContext | undefined): Promise<void>;
  /** Marks a user as having written just now: a worker, for the owner of a job that has ended. */
  noteWriteBy(userId: string): Promise<void>;
  /** Each replica's last check (empty without replicas). */
  status(): ReplicaState[];
  close(): Promise<void>;
}

export interface ReadRoutingOptions {
  primary: Db;
  redis: Redis;
  logger: Logger;
  config: Pick<
    Config,
    | "DATABASE_REPLICA_URLS"
    | "DATABASE_POOL_SIZE"
    | "DATABASE_PRIMARY_AFTER_WRITE_MS"
    | "DATABASE_REPLICA_MAX_LAG_MS"
    | "DATABASE_REPLICA_CHECK_MS"
    | "REDIS_PREFIX"
  >;
}

/** In-process marks are pruned once the map holds this many callers. */
const LOCAL_MARKS_PRUNE_AT = 10_000;

export function createReadRouting({ primary, redis, logger, config }: ReadRoutingOptions): ReadRouting {
  const urls = config.DATABASE_REPLICA_URLS ?? [];
  if (urls.length === 0) {
    return {
      replicaCount: 0,
      forCaller: async () => primary,
      noteWrite: async () => undefined,
      noteWriteBy: async () => undefined,
      status: () => [],
      close: async () => undefined,
    };
  }

  const replicas = urls.map((url) => createDb(url, config.DATABASE_POOL_SIZE));
  const health = new ReplicaHealth(primary, replicas, {
    intervalMs: config.DATABASE_REPLICA_CHECK_MS,
    maxLagMs: config.DATABASE_REPLICA_MAX_LAG_MS,
    timeoutMs: Math.max(1000, config.DATABASE_REPLICA_CHECK_MS),
    logger,
  });
  const replica = async (): Promise<Db> => {
    await health.start();
    const well = health.healthy();
    if (well.length === 0) return primary;
    return replicas[well[Math.floor(Math.random() * well.length)] as number] as Db;
  };

  const windowMs = config.DATABASE_PRIMARY_AFTER_WRITE_MS;
  const markKey = (userId: string) => `${config.REDIS_PREFIX}:db:wrote:${userId}`;
  const marks = new Map<string, number>();

  const markedLocally = (userId: string): boolean => {
    const until = marks.get(userId);
    if (until === undefined) return false;
    if (until > Date.now()) return true;
    marks.delete(userId);
    return false;
  };

  const noteWriteBy = async (userId: string) => {
    if (windowMs === 0) return;
    if (marks.size >= LOCAL_MARKS_PRUNE_AT) {
      const now = Date.now();
      for (const [id, until] of marks) if (until <= now) marks.delete(id);
    }
    marks.set(userId, Date.now() + windowMs);
    try {
      await redis.set(markKey(userId), "1", "PX", windowMs);
    } catch (err) {
      // Other processes then do not know for the window; this one does, and their
      // mark check fails (to the primary) while Redis stays down.
      logger.warn({ err: (err as Error).message, userId }, "read-after-write mark not stored in Redis");
    }
  };

  return {
    replicaCount: replicas.length,
    forCaller: async (auth) => {
      if (!auth) return replica();
      if (windowMs === 0) return replica();
      const userId = auth.user.id;
      if (markedLocally(userId)) return primary;
      try {
        if ((await redis.exists(markKey(userId))) === 1) return primary;
      } catch (err) {
        logger.warn({ err: (err as Error).message }, "read-after-write mark unreadable; reading from the primary");
        return primary;
      }
      return replica();
    },
    noteWrite: async (auth) => {
      if (auth) await noteWriteBy(auth.user.id);
    },
    noteWriteBy,
    status: () => health.states.map((state) => ({ ...state })),
    close: async () => {
      health.stop();
      await Promise.all(replicas.map((r) => r.$disconnect()));
    },
  };
}
