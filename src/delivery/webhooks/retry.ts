import type { Config } from "../../platform/config.js";

/**
 * The retry schedule of a delivery, in multiples of WEBHOOK_RETRY_BASE_MS (default 5 s): after
 * the 1st failed attempt 5 s, then 30 s, 2 min, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h. Ten attempts
 * over about 27.6 hours. WEBHOOK_MAX_ATTEMPTS may end it sooner.
 */
const STEPS = [1, 6, 24, 60, 360, 1440, 3600, 7200, 7200] as const;

export type RetryConfig = Pick<Config, "WEBHOOK_RETRY_BASE_MS" | "WEBHOOK_MAX_ATTEMPTS">;

/** The last attempt a delivery gets, given the queue's own limit. */
export const maxAttempts = (config: RetryConfig, queueAttempts = STEPS.length + 1) =>
  Math.min(config.WEBHOOK_MAX_ATTEMPTS, queueAttempts, STEPS.length + 1);

/** Milliseconds before the next attempt once `attemptsMade` attempts failed; -1 when none is left. */
export function retryDelayMs(config: RetryConfig, attemptsMade: number): number {
  if (attemptsMade < 1 || attemptsMade >= maxAttempts(config)) return -1;
  return (STEPS[attemptsMade - 1] as number) * config.WEBHOOK_RETRY_BASE_MS;
}
