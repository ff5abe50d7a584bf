import { jobIds } from "../jobs/ids.js";
import { assertCancelled, endedChannel, jobEnded, markCancelled, removeQueuedEntry } from "../jobs/lifecycle.js";
import type { AppDeps } from "../platform/deps.js";
import { AppError, notFound } from "../platform/errors.js";
import { activeWorkspaceOf, isUuid, requireWriter, writableEntityForUser } from "../workspaces/access.js";
import { emptyStatistics, type RunSweepInput, type SweepRunRecord, type SweepStatistics, type SweepStatus } from "./schemas.js";

/**
 * The web side of evidence capture: record the run (unique per caller and idempotency key),
 * queue one `sweep.run.v1` job for it, wait briefly, and answer the run. The same key for the
 * same entity answers the same run (a failed one is run again); for another entity it is a 409.
 */
export type SweepDeps = Pick<AppDeps, "db" | "queues" | "config" | "pubsub" | "redis" | "logger" | "reads">;

interface SweepRow {
  id: string;
  entityId: string;
  idempotencyKey: string;
  status: string;
  attempts: number;
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
  const created = await deps.db.$queryRaw<{ id: string }[]>`
    INSERT INTO sweep_runs (id, user_id, entity_id, idempotency_key, cutoff, statistics)
    VALUES (gen_random_uuid(), ${userId}::uuid, ${entity.id}::uuid, ${input.idempotency_key}, clock_timestamp(),
      ${JSON.stringify(emptyStatistics())}::jsonb)
    ON CONFLICT (user_id, idempotency_key) DO NOTHING
    RETURNING id`;

  let runId: string;
  let enqueue = true;
  if (created[0]) {
    runId = created[0].id;
  } else {
    const existing = await deps.db.sweepRun.findUnique({
      where: { userId_idempotencyKey: { userId, idempotencyKey: input.idempotency_key } },
    });
    if (!existing) throw new Error("sweep run vanished after a conflicting insert");
    if (existing.entityId !== entity.id) {
      throw new AppError(
        "idempotency_conflict",
        "This idempotency_key was already used for another entity's evidence capture; send a new key.",
      );
    }
    runId = existing.id;
    // Completed and cancelled are final: the same key answers the run as it ended.
    if (existing.status === "completed" || existing.status === "cancelled") return { finished: true, body: toSweepRecord(existing) };
    if (existing.status === "failed") {
      // A failed run may be run again under the same key; one retry wins the reset. It keeps its
      // cutoff, cursor and statistics, so it continues where it stopped.
      const reset = await deps.db.sweepRun.updateMany({
        where: { id: runId, status: "failed" },
        data: { status: "queued", error: null, finishedAt: null },
      });
      enqueue = reset.count === 1;
    }
    // queued/running: queue again under the same job id, a no-op while the queue holds the job.
  }

  if (enqueue) {
    try {
      await deps.queues.enqueue("sweep.run.v1", { runId }, { jobId: jobIds.sweep(runId) });
    } catch (err) {
      // The queue refused (Redis down): a run this request created is removed again, so nothing is
      // left half-created; one it reset is marked failed again, so the same key can be retried.
      if (created[0]) await deps.db.sweepRun.deleteMany({ where: { id: runId, status: "queued" } });
      else await deps.db.sweepRun.updateMany({ where: { id: runId, status: "queued" }, data: { status: "failed" } });
      throw err;
    }
  }
  return waitForSweep(deps, runId);
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
export async function cancelSweep(deps: SweepDeps, userId: string, runId: string): Promise<SweepRunRecord> {
  const visible = await visibleRun(deps, userId, runId);
  await requireWriter(deps.db, userId, visible.workspaceId, "cancel evidence capture runs");
  const outcome = await markCancelled(deps.db, "sweep_run", runId);
  assertCancelled("sweep_run", outcome);
  if (outcome.changed) {
    await removeQueuedEntry(deps.queues.get("enrichment"), jobIds.sweep(runId));
    await jobEnded(deps, { kind: "sweep_run", id: runId, status: "cancelled", data: { entity_id: visible.row.entityId } });
  }
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
