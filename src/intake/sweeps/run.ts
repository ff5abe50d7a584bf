import { activeWorkspaceOf, isUuid, requireWriter, writableEntityForUser } from "../../access/workspaces/access.js";
import { attemptOf } from "../../jobs/attempts.js";
import { jobIds } from "../../jobs/ids.js";
import { assertCancelled, cancelJob, endedChannel } from "../../jobs/lifecycle.js";
import { isLive } from "../../jobs/states.js";
import { submit } from "../../jobs/submit.js";
import type { AppDeps } from "../../platform/deps.js";
import { AppError, notFound } from "../../platform/errors.js";
import { emptyStatistics, type RunSweepInput, type SweepRunRecord, type SweepStatistics, type SweepStatus } from "./schemas.js";

/**
 * The web side of evidence capture: record the run (unique per caller, idempotency key and
 * attempt), queue one `sweep.run.v1` job for it, wait briefly, and answer the run. The same key
 * for the same entity answers its newest attempt; for another entity it is a 409. A failed run
 * stays failed: the same key retries it as a new attempt (src/jobs/attempts.ts) that continues
 * from the failed one's cutoff, cursor and statistics.
 */
export type SweepDeps = Pick<AppDeps, "db" | "pool" | "queues" | "config" | "pubsub" | "redis" | "logger" | "reads">;

interface SweepRow {
  id: string;
  entityId: string;
  idempotencyKey: string;
  status: string;
  attempts: number;
  attempt: number;
  retryOf: string | null;
  cutoff: Date;
  statistics: unknown;
  error: string | null;
  createdAt: Date;
  startedAt: Date | null;
  finishedAt: Date | null;
}

export const sweepRunPath = (runId: string) => `/api/sweeps/runs/${runId}`;

export function toSweepRecord(row: SweepRow): SweepRunRecord {
  return {
    run_id: row.id,
    entity_id: row.entityId,
    idempotency_key: row.idempotencyKey,
    status: row.status as SweepStatus,
    statistics: { ...emptyStatistics(), ...(row.statistics as Partial<SweepStatistics>) },
    error: row.error,
    cutoff: row.cutoff.toISOString(),
    attempts: row.attempts,
    ...attemptOf(row),
    created_at: row.createdAt.toISOString(),
    started_at: row.startedAt?.toISOString() ?? null,
    finished_at: row.finishedAt?.toISOString() ?? null,
    next: sweepRunPath(row.id),
  };
}

const finished = (status: string) => status === "completed" || status === "failed" || status === "cancelled";

/** Starts (or replays) a run for an entity of a workspace where the caller is an editor or above (403 `forbidden` for a viewer). */
export async function startSweep(
  deps: SweepDeps,
  userId: string,
  input: RunSweepInput,
): Promise<{ finished: boolean; body: SweepRunRecord }> {
  const entity = await writableEntityForUser(deps.db, userId, input.entity_id, "capture evidence");
  const key = input.idempotency_key;
  const { row } = await submit<{ id: string; status: string }>({
    write: async () => {
      const created = await deps.db.$queryRaw<{ id: string }[]>`
        INSERT INTO sweep_runs (id, user_id, entity_id, idempotency_key, cutoff, statistics)
        VALUES (gen_random_uuid(), ${userId}::uuid, ${entity.id}::uuid, ${key}, clock_timestamp(),
          ${JSON.stringify(emptyStatistics())}::jsonb)
        ON CONFLICT (user_id, idempotency_key, attempt) DO NOTHING
        RETURNING id`;
      if (created[0]) return { row: { id: created[0].id, status: "queued" }, created: true };
      const existing = await newestAttempt(deps.db, userId, key);
      if (!existing) throw new Error("sweep run vanished after a conflicting insert");
      if (existing.entityId !== entity.id) {
        throw new AppError(
          "idempotency_conflict",
          "This idempotency_key was already used for another entity's evidence capture; send a new key.",
        );
      }
      if (existing.status !== "failed") return { row: existing, created: false };
      // A failed run is final; the retry is the next attempt, which starts from the failed one's
      // cutoff, cursor and statistics, so it continues where that one stopped. Of concurrent
      // retries, one creates that attempt; the others answer it.
      const retry = await deps.db.$queryRaw<{ id: string }[]>`
        INSERT INTO sweep_runs (id, user_id, entity_id, idempotency_key, cutoff, cursor_created_at, cursor_id, statistics,
          attempt, retry_of)
        SELECT gen_random_uuid(), user_id, entity_id, idempotency_key, cutoff, cursor_created_at, cursor_id, statistics,
          attempt + 1, id
        FROM sweep_runs WHERE id = ${existing.id}::uuid AND status = 'failed'
        ON CONFLICT (user_id, idempotency_key, attempt) DO NOTHING
        RETURNING id`;
      if (retry[0]) return { row: { id: retry[0].id, status: "queued" }, created: true };
      return { row: (await newestAttempt(deps.db, userId, key)) ?? existing, created: false };
    },
    enqueue: (run) => deps.queues.enqueue("sweep.run.v1", { runId: run.id }, { jobId: jobIds.sweep(run.id) }),
    // The queue refused (Redis down): the attempt this request created is removed again, so nothing
    // is left half-created (a failed attempt it retried was never changed) and the same key can be retried.
    undo: (run) => deps.db.sweepRun.deleteMany({ where: { id: run.id, status: "queued" } }),
    // queued/running: queue again under the same job id, a no-op while the queue holds the job.
    requeueOnReplay: (run) => isLive(run.status),
  });
  return waitForSweep(deps, row.id);
}

/** The caller's newest attempt of a key. */
function newestAttempt(db: AppDeps["db"], userId: string, idempotencyKey: string) {
  return db.sweepRun.findFirst({
    where: { userId, idempotencyKey },
    orderBy: { attempt: "desc" },
    select: { id: true, status: true, entityId: true },
  });
}

/**
 * Waits up to SWEEP_WAIT_MS for the run to end: subscribed to its end signal (announced by the worker
 * once the end has committed), the row is read before waiting and once after the signal or the deadline.
 */
async function waitForSweep(deps: SweepDeps, runId: string): Promise<{ finished: boolean; body: SweepRunRecord }> {
  let signalled: () => void = () => undefined;
  const ended = new Promise<void>((resolve) => {
    signalled = resolve;
  });
  const unsubscribe = await deps.pubsub
    .subscribe(endedChannel(deps.config.REDIS_PREFIX, "sweep_run", runId), () => signalled())
    .catch(() => undefined);
  try {
    let row = await deps.db.sweepRun.findUnique({ where: { id: runId } });
    if (row && !finished(row.status) && deps.config.SWEEP_WAIT_MS > 0) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([ended, new Promise<void>((resolve) => (timer = setTimeout(resolve, deps.config.SWEEP_WAIT_MS)))]);
      clearTimeout(timer);
      row = await deps.db.sweepRun.findUnique({ where: { id: runId } });
    }
    if (!row) throw notFound("Sweep run");
    return { finished: finished(row.status), body: toSweepRecord(row) };
  } finally {
    await unsubscribe?.();
  }
}

/**
 * Cancels a run of the workspace (editors and above, whoever started it): a queued run leaves the
 * queue, a running one stops at its next page; what it enriched stays. Cancelling again answers the same.
 */
/** The cancel of one capture run, whoever asks (its route, a deletion): the transition, its queue entry and its end announced. */
export function cancelSweepRow(
  deps: Pick<AppDeps, "db" | "pool" | "queues" | "redis" | "config" | "logger" | "reads">,
  run: { id: string; entityId: string },
  detail?: string,
) {
  return cancelJob(deps, {
    kind: "sweep_run",
    id: run.id,
    detail,
    entry: { queue: deps.queues.get("enrichment"), id: jobIds.sweep(run.id) },
    data: { entity_id: run.entityId },
  });
}

export async function cancelSweep(deps: SweepDeps, userId: string, runId: string): Promise<SweepRunRecord> {
  const visible = await visibleRun(deps, userId, runId);
  await requireWriter(deps.db, userId, visible.workspaceId, "cancel evidence capture runs");
  const outcome = await cancelSweepRow(deps, { id: runId, entityId: visible.row.entityId });
  assertCancelled("sweep_run", outcome);
  return toSweepRecord(await deps.db.sweepRun.findUniqueOrThrow({ where: { id: runId } }));
}

async function visibleRun(deps: Pick<AppDeps, "db">, userId: string, runId: string) {
  const row = isUuid(runId) ? await deps.db.sweepRun.findUnique({ where: { id: runId } }) : null;
  const entity = row
    ? await deps.db.entity.findFirst({
        where: { id: row.entityId, workspace: activeWorkspaceOf(userId) },
        select: { workspaceId: true },
      })
    : null;
  if (!row || !entity) throw notFound("Sweep run");
  return { row, workspaceId: entity.workspaceId };
}

/** A run of an entity the caller can see, whoever started it; 404 when the caller is not a member of the entity's workspace. */
export async function sweepRun(deps: Pick<AppDeps, "db">, userId: string, runId: string): Promise<SweepRunRecord> {
  return toSweepRecord((await visibleRun(deps, userId, runId)).row);
}
