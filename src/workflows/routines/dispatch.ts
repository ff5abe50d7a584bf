import { hostname } from "node:os";
import { entityForUser } from "../../access/workspaces/access.js";
import { sha256Hex } from "../../platform/canonical.js";
import type { Config } from "../../platform/config.js";
import type { Db, DbTx } from "../../platform/db.js";
import { AppError, toError } from "../../platform/errors.js";
import type { Logger } from "../../platform/logger.js";
import type { Queues } from "../../platform/queues.js";
import { balance, lockWorkspaceLedger } from "../billing/ledger.js";
import { currentScope, insertQuote } from "../billing/quotes.js";
import { insertQueuedRun, sendStagedRun } from "../runs/service.js";
import { ceilingCredits, dueOccurrence } from "./schedule.js";
import type { SkipReason } from "./schemas.js";
import { DISPATCHER_NAME } from "./service.js";

/**
 * The dispatcher: one pass claims each due routine (enabled, next_run_at ≤ now) with
 * `FOR UPDATE SKIP LOCKED`, one routine per transaction, and in that transaction either starts
 * the occurrence's run or records why none started, and moves next_run_at past now. Any number
 * of passes may run at once, in any number of processes: a routine is handled by whichever claims
 * it, and the run's occurrence (routine id + occurrence time) is unique, so an occurrence never
 * starts two runs. A pass that dies mid-way rolls back and the next pass does the work again.
 */
export interface DispatchDeps {
  db: Db;
  queues: Queues;
  config: Config;
  logger: Logger;
}

const PASS_LIMIT = 500;

export interface PassResult {
  dispatched: number;
  skipped: number;
  failed: number;
}

type Handled = keyof PassResult;

type RoutineRow = Awaited<ReturnType<DbTx["skillRoutine"]["findUniqueOrThrow"]>>;

export async function dispatchDueRoutines(deps: DispatchDeps, options: { now?: () => Date; seenBy?: string } = {}): Promise<PassResult> {
  const now = options.now ?? (() => new Date());
  const result: PassResult = { dispatched: 0, skipped: 0, failed: 0 };
  const seenBy = options.seenBy ?? `${hostname()}:${process.pid}`;
  const attempted: string[] = [];
  for (let i = 0; i < PASS_LIMIT; i++) {
    const handled = await dispatchNext(deps, attempted, now(), seenBy);
    if (!handled) break;
    result[handled] += 1;
  }
  await recordHeartbeat(deps.db, seenBy);
  return result;
}

/** Claims and handles one due routine not yet attempted in this pass; undefined when none is left. */
async function dispatchNext(deps: DispatchDeps, attempted: string[], now: Date, seenBy: string): Promise<Handled | undefined> {
  let claimed: string | undefined;
  const staged: string[] = [];
  try {
    const handled = await deps.db.$transaction(
      async (tx) => {
        const rows = await tx.$queryRaw<{ id: string }[]>`
          SELECT id FROM skill_routines
          WHERE enabled AND next_run_at <= ${now} AND NOT (id = ANY(${attempted}::uuid[]))
          ORDER BY next_run_at, id
          LIMIT 1
          FOR UPDATE SKIP LOCKED`;
        const id = rows[0]?.id;
        if (!id) return undefined;
        claimed = id;
        attempted.push(id);
        // A run's job is staged and sent after commit: a queue that is down fails the attempt first, reserving nothing.
        await deps.queues.assertAvailable();
        const routine = await tx.skillRoutine.findUniqueOrThrow({ where: { id } });
        return handleOccurrence(tx, deps, routine, now, seenBy, staged);
      },
      { timeout: 20_000, maxWait: 10_000 },
    );
    // The run's first step, staged with it, goes on the queue now that both are committed.
    for (const entry of staged) await sendStagedRun(deps, entry);
    return handled;
  } catch (thrown) {
    if (!claimed) throw thrown;
    await recordFailure(deps, claimed, toError(thrown), now);
    return "failed";
  }
}

async function handleOccurrence(
  tx: DbTx,
  deps: DispatchDeps,
  routine: RoutineRow,
  now: Date,
  seenBy: string,
  staged: string[],
): Promise<Handled> {
  const due = dueOccurrence(routine.nextRunAt as Date, routine.intervalHours, deps.config.ROUTINE_HOUR_MS, now);
  const base = { tx, deps, routine, due };

  const skill = await tx.skill.findUnique({ where: { id: routine.skillId } });
  if (!skill || skill.entityId !== routine.entityId) {
    return skip(base, "skill_removed", "The skill was removed; the routine stopped.", { stop: true });
  }
  const userId = routine.updatedBy;
  const entity = await entityForUser(tx, userId, routine.entityId).catch((err: unknown) => {
    if (err instanceof AppError && err.code === "not_found") return undefined;
    throw err;
  });
  if (!entity) {
    return skip(base, "access_revoked", "The member who configured the routine can no longer see the entity; the routine stopped.", {
      stop: true,
    });
  }

  // Priced exactly as a quote prices it, at dispatch.
  const sourceMode = routine.sourceMode as "saved" | "refresh";
  const { scope, hash, price } = await currentScope(tx, userId, routine.entityId, skill.key, sourceMode);
  const ceiling = ceilingCredits(routine.maxChargeCents);
  if (price.estimated > ceiling) {
    return skip(
      base,
      "price_above_ceiling",
      `The run was priced at ${price.estimated} credits, above the ceiling of ${routine.maxChargeCents} cents (${ceiling} credits); nothing was charged.`,
      { estimated: price.estimated },
    );
  }
  // The run may be charged up to the quote's maximum, but never above the ceiling.
  const reserve = Math.min(price.maximum, ceiling);
  await lockWorkspaceLedger(tx, entity.workspaceId);
  const available = await balance(tx, entity.workspaceId);
  if (available < reserve) {
    return skip(
      base,
      "insufficient_credits",
      `The workspace has ${available} credits; the run needs ${reserve} reserved. Nothing was charged.`,
      { estimated: price.estimated },
    );
  }

  const quote = await insertQuote(tx, { skillId: skill.id, entityId: entity.id, userId, sourceMode, scope, hash, price }, now);
  const occurrenceAt = due.occurrence.toISOString();
  const { row: run, staged: entry } = await insertQueuedRun(tx, {
    skillId: skill.id,
    skillKey: skill.key,
    entityId: entity.id,
    workspaceId: entity.workspaceId,
    userId,
    quoteId: quote.id,
    // Starts with "@", which no client's Idempotency-Key may, so no request can take it first.
    idempotencyKey: `@routine:${routine.id}:${occurrenceAt}`,
    requestHash: sha256Hex("routine-occurrence-v1", routine.id, occurrenceAt),
    scopeHash: hash,
    sourceMode,
    maxChargeCredits: reserve,
    estimatedCredits: price.estimated,
    scope,
    routineId: routine.id,
    routineOccurrenceAt: due.occurrence,
  });
  staged.push(entry);
  const detail =
    due.coalesced > 0
      ? `This run stands for ${due.coalesced + 1} occurrences: the ${due.coalesced} before it passed while nothing dispatched.`
      : null;
  await tx.routineOccurrence.create({
    data: {
      routineId: routine.id,
      occurrenceAt: due.occurrence,
      outcome: "dispatched",
      detail,
      runId: run.id,
      coalesced: due.coalesced,
      estimatedCredits: price.estimated,
    },
  });
  await tx.skillRoutine.update({
    where: { id: routine.id },
    data: {
      nextRunAt: due.next,
      lastOccurrenceAt: due.occurrence,
      lastRunAt: now,
      lastRunId: run.id,
      lastOutcome: "dispatched",
      lastOutcomeDetail: detail,
      dispatchAttempts: 0,
    },
  });
  deps.logger.info(
    { routineId: routine.id, skillId: skill.id, runId: run.id, occurrence: occurrenceAt, coalesced: due.coalesced, dispatcher: seenBy },
    "routine run dispatched",
  );
  return "dispatched";
}

/**
 * Records an occurrence that started no run. A removed skill or a configurer who lost access
 * stops the routine (it is paused, with a new revision); a price above the ceiling or too few
 * credits only skips this occurrence.
 */
async function skip(
  base: { tx: DbTx; deps: DispatchDeps; routine: RoutineRow; due: ReturnType<typeof dueOccurrence> },
  reason: SkipReason,
  detail: string,
  options: { stop?: boolean; estimated?: number } = {},
): Promise<Handled> {
  const { tx, deps, routine, due } = base;
  await tx.routineOccurrence.create({
    data: {
      routineId: routine.id,
      occurrenceAt: due.occurrence,
      outcome: "skipped",
      reason,
      detail,
      coalesced: due.coalesced,
      estimatedCredits: options.estimated ?? null,
    },
  });
  await tx.skillRoutine.update({
    where: { id: routine.id },
    data: {
      lastOccurrenceAt: due.occurrence,
      lastOutcome: reason,
      lastOutcomeDetail: detail,
      dispatchAttempts: 0,
      ...(options.stop ? { enabled: false, nextRunAt: null, revision: { increment: 1 } } : { nextRunAt: due.next }),
    },
  });
  deps.logger.info({ routineId: routine.id, occurrence: due.occurrence.toISOString(), reason }, "routine occurrence skipped");
  return "skipped";
}

/**
 * A dispatch attempt failed (the database or the job queue refused, say): the transaction rolled
 * back, so nothing was started or charged. The occurrence stays due and every later pass tries it
 * again; if it is still failing when the next occurrence comes due, the run that finally starts
 * stands for both (as when no dispatcher ran). The attempt is counted on the routine.
 */
async function recordFailure(deps: DispatchDeps, routineId: string, err: Error, now: Date): Promise<void> {
  deps.logger.warn({ routineId, err: err.message }, "routine dispatch failed; retried on the next pass");
  await deps.db.$transaction(async (tx) => {
    await tx.$queryRaw`SELECT id FROM skill_routines WHERE id = ${routineId}::uuid FOR UPDATE`;
    const routine = await tx.skillRoutine.findUnique({ where: { id: routineId } });
    if (!routine?.enabled || !routine.nextRunAt || routine.nextRunAt > now) return;
    const attempts = routine.dispatchAttempts + 1;
    await tx.skillRoutine.update({
      where: { id: routineId },
      data: {
        dispatchAttempts: attempts,
        dispatchErrors: { increment: 1 },
        lastOutcome: "dispatch_failed",
        lastOutcomeDetail: `Dispatch failed ${attempts} time${attempts === 1 ? "" : "s"}, retried on the next pass: ${err.message}`.slice(
          0,
          1000,
        ),
      },
    });
  });
}

/** The heartbeat GET …/skill-routines answers as `scheduler_last_seen_at`. */
async function recordHeartbeat(db: Db, seenBy: string): Promise<void> {
  await db.$executeRaw`
    INSERT INTO routine_dispatchers (name, last_seen_at, seen_by) VALUES (${DISPATCHER_NAME}, now(), ${seenBy})
    ON CONFLICT (name) DO UPDATE SET last_seen_at = GREATEST(routine_dispatchers.last_seen_at, EXCLUDED.last_seen_at), seen_by = EXCLUDED.seen_by`;
}

/** Milliseconds since the last pass finished (database clock), or null when none ever did. */
export async function heartbeatAgeMs(db: Db): Promise<number | null> {
  const rows = await db.$queryRaw<{ age_ms: number | null }[]>`
    SELECT (EXTRACT(EPOCH FROM (now() - last_seen_at)) * 1000)::float8 AS age_ms FROM routine_dispatchers WHERE name = ${DISPATCHER_NAME}`;
  return rows[0]?.age_ms ?? null;
}
