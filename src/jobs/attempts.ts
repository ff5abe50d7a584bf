import { z } from "zod";

/**
 * Retries are new attempts. A job in a terminal state (completed, failed, cancelled, partial) never
 * changes again; a retry of a failed job under the same key (a meeting-note sync's request_id, an
 * evidence capture's idempotency key) or an operator's requeue-job of a failed collection job is a
 * new row: `attempt` n + 1 of the same (caller, key), `retry_of` naming the failed row. The key
 * answers its newest attempt; the unique index over (caller, key, attempt) lets exactly one of
 * several concurrent retries create it (`INSERT … attempt + 1 … ON CONFLICT DO NOTHING`).
 *
 * Glossary:
 * - attempt: which try of a key a row is (1 for the first).
 * - retry_of: the failed row an attempt retries (null for a first attempt, or once that row is gone).
 */
export const AttemptFields = {
  attempt: z
    .number()
    .int()
    .min(1)
    .describe("Which attempt of its key this job is: 1 for the first; a retry of a failed job is a new job with the next attempt"),
  retry_of: z.uuid().nullable().describe("The id of the failed job this attempt retries (it stays failed); null for a first attempt"),
};

/** The attempt fields of an answer, from a row. */
export const attemptOf = (row: { attempt: number; retryOf: string | null }) => ({ attempt: row.attempt, retry_of: row.retryOf });
