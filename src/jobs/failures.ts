import { UnrecoverableError } from "bullmq";
import { AppError } from "../platform/errors.js";
import { JobCancelled } from "./cancellation.js";

/**
 * How every job kind decides between "retry with backoff" and "end now". Permanent: an
 * UnrecoverableError, a cancel, an error marked permanent (a child job that ended without a
 * result), and an AppError the caller caused (4xx other than timeouts and rate limits).
 * Anything else (5xx, a lost connection, a bug) is retried until the last attempt.
 */
export function isPermanent(err: unknown): boolean {
  if (err instanceof UnrecoverableError || err instanceof JobCancelled) return true;
  if ((err as { permanent?: unknown } | null)?.permanent === true) return true;
  return err instanceof AppError && err.status < 500 && err.status !== 408 && err.status !== 429;
}

/** True on the job's last attempt: a failure now is final. */
export const isFinalAttempt = (job: { attemptsMade: number; opts: { attempts?: number } }): boolean =>
  job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
