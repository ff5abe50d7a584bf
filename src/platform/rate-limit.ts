import type { AuthContext } from "./auth.js";
import { AppError } from "./errors.js";
import type { Logger } from "./logger.js";
import type { Redis } from "./redis.js";

/**
 * A fixed one-minute window per API key (or per user for bearers), counted in Redis so
 * the limit holds across web processes. While Redis is unreachable the limiter lets
 * requests through: losing the limiter must not take the API down with it.
 */
export function createRateLimiter(redis: Redis, prefix: string, perMinute: number, logger: Logger) {
  return async (auth: AuthContext | undefined): Promise<void> => {
    if (!auth || perMinute <= 0) return;
    const subject = auth.key ? `key:${auth.key.id}` : `user:${auth.user.id}`;
    const windowStart = Math.floor(Date.now() / 60000);
    const counter = `${prefix}:ratelimit:${subject}:${windowStart}`;
    let count: number;
    try {
      const result = await redis.multi().incr(counter).expire(counter, 120).exec();
      count = Number(result?.[0]?.[1] ?? 0);
    } catch (err) {
      logger.warn({ err }, "rate limiter unavailable; request allowed");
      return;
    }
    if (count > perMinute) {
      const retryAfter = Math.max(1, 60 - Math.floor((Date.now() / 1000) % 60));
      throw new AppError("rate_limited", `Rate limit of ${perMinute} requests per minute exceeded.`, {
        headers: { "Retry-After": String(retryAfter) },
      });
    }
  };
}
