import type { AuthContext } from "./auth.js";
import { AppError } from "./errors.js";
import type { Logger } from "./logger.js";
import type { Redis } from "./redis.js";

/**
 * A fixed one-minute window per subject, counted in Redis so the limit holds across web processes.
 * Answers how many seconds to wait when `subject` is over `perMinute` this minute, else null. While
 * Redis is unreachable it lets requests through: losing the limiter must not take the API down with it.
 */
export function createWindowCounter(redis: Redis, prefix: string, logger: Logger) {
  return async (subject: string, perMinute: number): Promise<number | null> => {
    if (perMinute <= 0) return null;
    const windowStart = Math.floor(Date.now() / 60000);
    const counter = `${prefix}:ratelimit:${subject}:${windowStart}`;
    let count: number;
    try {
      const result = await redis.multi().incr(counter).expire(counter, 120).exec();
      count = Number(result?.[0]?.[1] ?? 0);
    } catch (err) {
      logger.warn({ err }, "rate limiter unavailable; request allowed");
      return null;
    }
    return count > perMinute ? Math.max(1, 60 - Math.floor((Date.now() / 1000) % 60)) : null;
  };
}

/** The API's limit: RATE_LIMIT_PER_MINUTE per API key (or per user for bearers), 429 `rate_limited` beyond. */
export function createRateLimiter(redis: Redis, prefix: string, perMinute: number, logger: Logger) {
  const count = createWindowCounter(redis, prefix, logger);
  return async (auth: AuthContext | undefined): Promise<void> => {
    if (!auth) return;
    const retryAfter = await count(auth.key ? `key:${auth.key.id}` : `user:${auth.user.id}`, perMinute);
    if (retryAfter !== null) {
      throw new AppError("rate_limited", `Rate limit of ${perMinute} requests per minute exceeded.`, {
        headers: { "Retry-After": String(retryAfter) },
      });
    }
  };
}
