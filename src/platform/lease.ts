import { randomUUID } from "node:crypto";
import type { Redis } from "./redis.js";

/**
 * A lease in Redis that one holder at a time keeps while it works: `SET key token NX PX ttl`, renewed
 * every third of the ttl while held, released only by its holder (compare and delete). A holder that
 * dies releases it when the ttl lapses. For passes that must not run twice at once across processes
 * and that PostgreSQL cannot hold for them (a session advisory lock breaks behind PgBouncer in
 * transaction mode, and `CREATE INDEX CONCURRENTLY` runs outside any transaction).
 */
export interface Lease {
  /** Releases the lease if this holder still has it. */
  release(): Promise<void>;
}

const RENEW = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) else return 0 end`;
const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end`;

/** Takes the lease named `key`, or answers undefined when another holder has it. */
export async function takeLease(redis: Redis, key: string, ttlMs = 60_000): Promise<Lease | undefined> {
  const token = randomUUID();
  if ((await redis.set(key, token, "PX", ttlMs, "NX")) !== "OK") return undefined;
  const timer = setInterval(
    () => {
      redis.eval(RENEW, 1, key, token, ttlMs).catch(() => {});
    },
    Math.max(1, Math.floor(ttlMs / 3)),
  );
  timer.unref();
  return {
    async release() {
      clearInterval(timer);
      await redis.eval(RELEASE, 1, key, token);
    },
  };
}
