import { entityForUser, requireRole } from "../../access/workspaces/access.js";
import { audit } from "../../access/workspaces/audit.js";
import type { Config } from "../../platform/config.js";
import type { Db, DbTx } from "../../platform/db.js";
import { AppError, notFound } from "../../platform/errors.js";
import { skillForUser } from "../skills/service.js";
import { firstOccurrence, intervalMs, rescheduled } from "./schedule.js";
import type { Outcome, RoutineInput, RoutineRecord } from "./schemas.js";

/**
 * Routines: a skill run on a schedule (daily or weekly) with a ceiling on what one run may
 * charge. Configuration is guarded by a revision: 0 creates, and a change names the revision it
 * was based on. Admins and owners configure routines (recurring paid work); every member reads them.
 * The runs are started by the dispatcher (dispatch.ts) as the member who last configured it.
 */
export const DISPATCHER_NAME = "routines";

interface RoutineRow {
  id: string;
  skillId: string;
  skillKey: string;
  entityId: string;
  revision: number;
  enabled: boolean;
  intervalHours: number;
  sourceMode: string;
  maxChargeCents: number;
  nextRunAt: Date | null;
  lastOccurrenceAt: Date | null;
  lastRunAt: Date | null;
  lastRunId: string | null;
  lastOutcome: string | null;
  lastOutcomeDetail: string | null;
  createdAt: Date;
  updatedAt: Date;
  updatedBy: string;
}

export function toRoutineRecord(row: RoutineRow): RoutineRecord {
  return {
    skill_id: row.skillKey,
    entity_id: row.entityId,
    revision: row.revision,
    enabled: row.enabled,
    interval_hours: row.intervalHours,
    source_mode: row.sourceMode as RoutineRecord["source_mode"],
    max_charge_cents: row.maxChargeCents,
    next_run_at: row.nextRunAt?.toISOString() ?? null,
    last_run_at: row.lastRunAt?.toISOString() ?? null,
    last_run_id: row.lastRunId,
    last_outcome: row.lastOutcome as Outcome | null,
    last_outcome_detail: row.lastOutcomeDetail,
    last_occurrence_at: row.lastOccurrenceAt?.toISOString() ?? null,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
    updated_by: row.updatedBy,
  };
}

const sameSettings = (row: RoutineRow, input: RoutineInput) =>
  row.enabled === input.enabled &&
  row.intervalHours === input.interval_hours &&
  row.sourceMode === input.source_mode &&
  row.maxChargeCents === input.max_charge_cents;

/** The routine row of a skill, locked for the rest of the transaction (the dispatcher skips it meanwhile). */
async function lockRoutine(tx: DbTx, skillId: string) {
  // Serialises creation too: two first PUTs of one skill make one routine, the other gets 409.
  await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext(${`routine:${skillId}`}))`;
  await tx.$queryRaw`SELECT id FROM skill_routines WHERE skill_id = ${skillId}::uuid FOR UPDATE`;
  return tx.skillRoutine.findUnique({ where: { skillId } });
}

/**
 * Creates or changes a skill's routine. A revision other than the current one is a 409 with the
 * current revision, except a repeat of the change that produced the current revision (same caller,
 * same settings, based on the revision before): that answers the routine again, so a client may
 * retry a write whose answer it lost. Settings equal to the current ones change nothing.
 */
export async function putRoutine(
  deps: { db: Db; config: Config },
  userId: string,
  params: { entityId: string; skillId: string },
  input: RoutineInput,
): Promise<{ status: number; body: RoutineRecord }> {
  const { db, config } = deps;
  const { entity, skill } = await skillForUser(db, userId, params.entityId, params.skillId);
  // Recurring paid work: admins and owners configure it, before any other check answers.
  await requireRole(db, userId, entity.workspaceId, "admin", "configure routines");
  if (input.enabled && !config.ROUTINES_ENABLED) {
    throw new AppError(
      "service_unavailable",
      "Scheduled runs are switched off on this service (ROUTINES_ENABLED=false); a routine can be saved paused, not enabled.",
      { extra: { scheduler_enabled: false } },
    );
  }
  const hourMs = config.ROUTINE_HOUR_MS;
  return db.$transaction(async (tx) => {
    const current = await lockRoutine(tx, skill.id);
    const now = new Date();
    const currentRevision = current?.revision ?? 0;
    if (input.expected_revision !== currentRevision) {
      const retried =
        current && input.expected_revision === currentRevision - 1 && current.updatedBy === userId && sameSettings(current, input);
      if (retried) return { status: 200, body: toRoutineRecord(current) };
      throw new AppError(
        "conflict",
        current
          ? `The routine is at revision ${currentRevision}, not ${input.expected_revision}; read it again and resend.`
          : "The skill has no routine yet; create it with expected_revision 0.",
        { extra: { current_revision: currentRevision, routine: current ? toRoutineRecord(current) : null } },
      );
    }
    if (!current) {
      const created = await tx.skillRoutine.create({
        data: {
          skillId: skill.id,
          skillKey: skill.key,
          entityId: entity.id,
          workspaceId: entity.workspaceId,
          enabled: input.enabled,
          intervalHours: input.interval_hours,
          sourceMode: input.source_mode,
          maxChargeCents: input.max_charge_cents,
          nextRunAt: input.enabled ? firstOccurrence(now, input.interval_hours, hourMs) : null,
          createdBy: userId,
          updatedBy: userId,
        },
      });
      await auditRoutine(tx, created, userId, "routine.created");
      return { status: 201, body: toRoutineRecord(created) };
    }
    if (sameSettings(current, input)) return { status: 200, body: toRoutineRecord(current) };
    const updated = await tx.skillRoutine.update({
      where: { id: current.id },
      data: {
        revision: { increment: 1 },
        enabled: input.enabled,
        intervalHours: input.interval_hours,
        sourceMode: input.source_mode,
        maxChargeCents: input.max_charge_cents,
        nextRunAt: nextRunAfterChange(current, input, hourMs, now),
        dispatchAttempts: 0,
        updatedBy: userId,
      },
    });
    await auditRoutine(tx, updated, userId, "routine.changed");
    return { status: 200, body: toRoutineRecord(updated) };
  });
}

const auditRoutine = (tx: DbTx, row: RoutineRow & { workspaceId: string }, userId: string, action: string) =>
  audit(tx, row.workspaceId, userId, action, row.id, {
    skill_id: row.skillKey,
    entity_id: row.entityId,
    enabled: row.enabled,
    interval_hours: row.intervalHours,
    source_mode: row.sourceMode,
    max_charge_cents: row.maxChargeCents,
    revision: row.revision,
  });

/**
 * Pausing clears the next occurrence; enabling starts the count again (one interval from now);
 * a new interval counts from the previous occurrence (or the enabling) and is due at once when
 * that moment has passed. Other changes keep the occurrence already planned.
 */
function nextRunAfterChange(current: RoutineRow, input: RoutineInput, hourMs: number, now: Date): Date | null {
  if (!input.enabled) return null;
  if (!current.enabled || !current.nextRunAt) return firstOccurrence(now, input.interval_hours, hourMs);
  if (current.intervalHours === input.interval_hours) return current.nextRunAt;
  const since = new Date(current.nextRunAt.getTime() - intervalMs(current.intervalHours, hourMs));
  return rescheduled(since, input.interval_hours, hourMs, now);
}

/** When the dispatcher last finished a pass, if ever. */
export async function schedulerLastSeen(db: Db | DbTx): Promise<Date | null> {
  const row = await db.routineDispatcher.findUnique({ where: { name: DISPATCHER_NAME } });
  return row?.lastSeenAt ?? null;
}

export async function listRoutines(deps: { db: Db; config: Config }, userId: string, entityId: string) {
  const entity = await entityForUser(deps.db, userId, entityId);
  const [rows, lastSeen] = await Promise.all([
    deps.db.skillRoutine.findMany({ where: { entityId: entity.id }, orderBy: [{ createdAt: "asc" }, { id: "asc" }] }),
    schedulerLastSeen(deps.db),
  ]);
  return {
    entity_id: entity.id,
    scheduler_enabled: deps.config.ROUTINES_ENABLED,
    scheduler_last_seen_at: lastSeen?.toISOString() ?? null,
    routines: rows.map(toRoutineRecord),
  };
}

/** One routine with its latest occurrences (newest first). Also readable after its skill was removed. */
export async function getRoutine(db: Db, userId: string, params: { entityId: string; skillId: string }, limit = 20) {
  const entity = await entityForUser(db, userId, params.entityId);
  // One snapshot: a dispatch that commits between two reads must not show its occurrence beside the
  // routine's state from before it.
  const { row, occurrences } = await db.$transaction(
    async (tx) => {
      // The newest routine that ran a skill of this id (a removed skill's routine stays readable).
      const row = await tx.skillRoutine.findFirst({
        where: { skillKey: params.skillId, entityId: entity.id },
        orderBy: { createdAt: "desc" },
      });
      if (!row) throw notFound("Routine");
      const occurrences = await tx.routineOccurrence.findMany({
        where: { routineId: row.id },
        orderBy: { occurrenceAt: "desc" },
        take: limit,
      });
      return { row, occurrences };
    },
    { isolationLevel: "RepeatableRead" },
  );
  return {
    ...toRoutineRecord(row),
    occurrences: occurrences.map((o) => ({
      occurrence_at: o.occurrenceAt.toISOString(),
      outcome: o.outcome as "dispatched" | "skipped",
      reason: o.reason,
      detail: o.detail,
      run_id: o.runId,
      coalesced: o.coalesced,
      estimated_credits: o.estimatedCredits,
      recorded_at: o.createdAt.toISOString(),
    })),
  };
}
