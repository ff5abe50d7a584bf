import type { Db, DbTx, Prisma } from "../platform/db.js";
import type { Logger } from "../platform/logger.js";
import type { JobName, JobPayload, Queues } from "../platform/queues.js";

/**
 * The job outbox: a job whose row is written inside a larger transaction is staged in that same
 * transaction (`stageJob`) and put on the queue only after the transaction commits (`relayStaged`).
 * The row and the intent to run it commit together or not at all, so a worker never receives a job
 * whose row it cannot see, and an enqueue that fails after commit (Redis gone for a moment, the
 * process stopped) is not lost: the worker process's relay (`startOutboxRelay`) and the operator's
 * `requeue-lost` send every entry still staged. An entry is deleted once the queue holds its job;
 * sending one twice is harmless, because the job id names the work and processors skip rows that
 * are already past it.
 */
type OutboxDeps = { db: Db; queues: Queues; logger: Logger };

export async function stageJob<N extends JobName>(tx: DbTx, name: N, payload: JobPayload<N>, jobId: string): Promise<string> {
  const entry = await tx.jobOutbox.create({
    data: { jobName: name, payload: payload as unknown as Prisma.InputJsonValue, jobId },
    select: { id: true },
  });
  return entry.id;
}

const BATCH = 100;

/**
 * Sends staged entries (the given ones, else the oldest staged more than `olderThanMs` ago) and
 * deletes each once the queue holds its job. Entries another relay is sending are skipped. Answers
 * how many were sent; throws the queue's refusal when `ids` were named and none could be sent.
 */
export async function relayStaged(deps: OutboxDeps, options: { ids?: string[]; olderThanMs?: number } = {}): Promise<number> {
  let sent = 0;
  let refusal: unknown;
  for (;;) {
    const batch = await deps.db.$transaction(async (tx) => {
      const rows = options.ids
        ? await tx.$queryRaw<{ id: string; job_name: string; payload: unknown; job_id: string }[]>`
            SELECT id, job_name, payload, job_id FROM job_outbox WHERE id = ANY(${options.ids}::uuid[])
            ORDER BY created_at FOR UPDATE SKIP LOCKED`
        : await tx.$queryRaw<{ id: string; job_name: string; payload: unknown; job_id: string }[]>`
            SELECT id, job_name, payload, job_id FROM job_outbox
            WHERE created_at <= now() - make_interval(secs => ${(options.olderThanMs ?? 0) / 1000})
            ORDER BY created_at LIMIT ${BATCH} FOR UPDATE SKIP LOCKED`;
      const done: string[] = [];
      for (const row of rows) {
        try {
          await deps.queues.enqueue(row.job_name as JobName, row.payload as never, { jobId: row.job_id });
          done.push(row.id);
        } catch (err) {
          refusal = err;
          await tx.jobOutbox.update({
            where: { id: row.id },
            data: { attempts: { increment: 1 }, lastError: err instanceof Error ? err.message.slice(0, 500) : String(err) },
          });
          break;
        }
      }
      if (done.length > 0) await tx.jobOutbox.deleteMany({ where: { id: { in: done } } });
      return { taken: rows.length, done: done.length };
    });
    sent += batch.done;
    if (options.ids || batch.done < batch.taken || batch.taken < BATCH) break;
  }
  if (options.ids && sent === 0 && refusal) throw refusal;
  return sent;
}

/** Relays entries left staged (older than `graceMs`, so a producer's own relay goes first) every `intervalMs`. */
export function startOutboxRelay(deps: OutboxDeps, options: { intervalMs: number; graceMs: number }): { close: () => Promise<void> } {
  let running: Promise<unknown> = Promise.resolve();
  let stopped = false;
  const timer = setInterval(() => {
    running = running.then(async () => {
      if (stopped) return;
      try {
        const sent = await relayStaged(deps, { olderThanMs: options.graceMs });
        if (sent > 0) deps.logger.warn({ sent }, "sent staged jobs whose enqueue after commit had not happened");
      } catch (err) {
        deps.logger.warn({ err }, "the job outbox relay failed; it tries again");
      }
    });
  }, options.intervalMs);
  timer.unref();
  return {
    close: async () => {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}
