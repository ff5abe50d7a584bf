/**
 * How every kind of job is submitted: write its row, then add its queue entry; if the queue
 * refuses, undo the write and pass the refusal on (the caller answers 503), so a refused
 * submit leaves nothing behind. A replay of an earlier submit (same idempotency key) writes
 * nothing and, while the job is still queued, adds the entry again, which heals an entry
 * Redis lost and is a no-op while the queue holds it (the job id names the work).
 *
 * A write inside a larger transaction (a workflow run reserving credits, a routine's
 * occurrence) submits inside it: `undo` is then the transaction's rollback, which the
 * refusal thrown from here causes.
 */
export interface Submission<R> {
  /** Writes the row; `created` is false for a replay that found an earlier submit's row. */
  write: () => Promise<{ row: R; created: boolean }>;
  enqueue: (row: R) => Promise<unknown>;
  /** Removes the row `write` created (a new job, or a retry's new attempt); called only when it created one. */
  undo: (row: R) => Promise<unknown>;
  /** For a replay: whether its entry is added again (the row still says queued). */
  requeueOnReplay?: (row: R) => boolean;
}

export async function submit<R>(submission: Submission<R>): Promise<{ row: R; created: boolean }> {
  const written = await submission.write();
  if (!written.created && !submission.requeueOnReplay?.(written.row)) return written;
  try {
    await submission.enqueue(written.row);
  } catch (err) {
    if (written.created) await submission.undo(written.row);
    throw err;
  }
  return written;
}
