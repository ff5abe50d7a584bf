import { appendEntry, balance, lockWorkspaceLedger } from "../billing/ledger.js";
import type { RunScope } from "../billing/pricing.js";
import { currentScope } from "../billing/quotes.js";
import { jobIds } from "../jobs/ids.js";
import { submit } from "../jobs/submit.js";
import { canonicalJson, sha256Hex } from "../platform/canonical.js";
import type { Db, DbTx, Prisma } from "../platform/db.js";
import { AppError, ValidationFailed } from "../platform/errors.js";
import type { Queues } from "../platform/queues.js";
import { skillForUser } from "../skills/service.js";
import { entityForUser } from "../workspaces/access.js";
import type { CreateRunInput, RunRecord } from "./schemas.js";

/**
 * Workflow runs: an approved quote becomes a run. The approval names the quoted scope_hash and the
 * maximum the caller accepts; the maximum is reserved from the workspace's credits, the run is queued,
 * and it is settled at its actual cost when it ends (never above the maximum; nothing when it fails).
 */
interface RunRow {
  id: string;
  skillId: string;
  entityId: string;
  workspaceId: string;
  status: string;
  sourceMode: string;
  scopeHash: string;
  estimatedCredits: number;
  maxChargeCredits: number;
  chargedCredits: number;
  collectionJobId: string | null;
  analysisId: string | null;
  error: string | null;
  createdAt: Date;
  updatedAt: Date;
  finishedAt: Date | null;
  routineId: string | null;
  routineOccurrenceAt: Date | null;
}

export function toRunRecord(row: RunRow): RunRecord {
  return {
    id: row.id,
    skill_id: row.skillId,
    entity_id: row.entityId,
    workspace_id: row.workspaceId,
    status: row.status as RunRecord["status"],
    source_mode: row.sourceMode as RunRecord["source_mode"],
    scope_hash: row.scopeHash,
    estimated_credits: row.estimatedCredits,
    max_charge_credits: row.maxChargeCredits,
    charged_credits: row.chargedCredits,
    collection_job_id: row.collectionJobId,
    analysis_id: row.analysisId,
    error: row.error,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
    finished_at: row.finishedAt?.toISOString() ?? null,
    routine_id: row.routineId,
    routine_occurrence_at: row.routineOccurrenceAt?.toISOString() ?? null,
    links: {
      self: `/api/entities/${row.entityId}/skills/${row.skillId}/runs/${row.id}`,
      analysis: row.analysisId ? `/agent/v1/analysis/${row.analysisId}` : null,
      collection_job: row.collectionJobId ? `/agent/v1/ingest/collection/jobs/${row.collectionJobId}` : null,
    },
  };
}

const refuseMaximum = (msg: string, type: string) => new ValidationFailed([{ loc: ["body", "max_charge_credits"], msg, type }]);

export async function createRun(
  deps: { db: Db; queues: Queues },
  userId: string,
  params: { entityId: string; skillId: string; idempotencyKey: string },
  input: CreateRunInput,
): Promise<{ status: number; body: RunRecord; replayed: boolean }> {
  const { db } = deps;
  const { skill } = await skillForUser(db, userId, params.entityId, params.skillId);
  const requestHash = sha256Hex("run-request-v1", skill.entityId, skill.id, canonicalJson(input));

  const replay = async () => {
    const existing = await db.workflowRun.findUnique({
      where: { userId_idempotencyKey: { userId, idempotencyKey: params.idempotencyKey } },
    });
    if (!existing) return undefined;
    if (existing.requestHash !== requestHash) {
      throw new AppError("idempotency_conflict", "This Idempotency-Key was already used for a different run request.");
    }
    return { status: 202, body: (existing.response as RunRecord | null) ?? toRunRecord(existing), replayed: true };
  };
  const earlier = await replay();
  if (earlier) return earlier;

  const quote = await db.quote.findFirst({
    where: { userId, skillId: skill.id, scopeHash: input.scope_hash },
    orderBy: { createdAt: "desc" },
  });
  if (!quote) throw new AppError("stale_quote", "No quote of this skill matches scope_hash; request a new quote.");
  const current = await currentScope(db, userId, params.entityId, skill.id, quote.sourceMode as "saved" | "refresh");
  if (current.hash !== input.scope_hash) {
    throw new AppError("stale_quote", "The skill's run scope changed since it was quoted; request a new quote.", {
      extra: { current_scope_hash: current.hash },
    });
  }
  if (quote.expiresAt.getTime() <= Date.now()) {
    throw new AppError("quote_expired", `The quote expired at ${quote.expiresAt.toISOString()}; request a new quote.`);
  }
  if (input.max_charge_credits < quote.estimatedCredits) {
    throw refuseMaximum(`max_charge_credits must be at least the quoted estimate (${quote.estimatedCredits})`, "greater_than_equal");
  }
  if (input.max_charge_credits > quote.maxChargeCredits) {
    throw refuseMaximum(`max_charge_credits must not exceed the quoted maximum (${quote.maxChargeCredits})`, "less_than_equal");
  }
  const entity = current.entity;

  const created = await db.$transaction(
    async (tx) => {
      // Same key in parallel: one creates, the others wait here and replay.
      await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext(${`run-key:${userId}:${params.idempotencyKey}`}))`;
      const raced = await tx.workflowRun.findUnique({
        where: { userId_idempotencyKey: { userId, idempotencyKey: params.idempotencyKey } },
      });
      if (raced) return { row: raced, replayed: true };

      await lockWorkspaceLedger(tx, entity.workspaceId);
      const available = await balance(tx, entity.workspaceId);
      if (available < input.max_charge_credits) {
        throw new AppError(
          "insufficient_credits",
          `The workspace has ${available} credits; this run needs ${input.max_charge_credits} reserved.`,
          { extra: { balance: available, required: input.max_charge_credits } },
        );
      }
      const row = await insertQueuedRun(tx, deps.queues, {
        skillId: skill.id,
        entityId: entity.id,
        workspaceId: entity.workspaceId,
        userId,
        quoteId: quote.id,
        idempotencyKey: params.idempotencyKey,
        requestHash,
        scopeHash: input.scope_hash,
        sourceMode: quote.sourceMode,
        maxChargeCredits: input.max_charge_credits,
        estimatedCredits: quote.estimatedCredits,
        scope: current.scope,
      });
      return { row, replayed: false };
    },
    { timeout: 20_000, maxWait: 10_000 },
  );
  if (created.replayed) {
    const again = await replay();
    if (again) return again;
  }
  return { status: 202, body: toRunRecord(created.row), replayed: false };
}

export interface NewRun {
  skillId: string;
  entityId: string;
  workspaceId: string;
  userId: string;
  quoteId: string;
  idempotencyKey: string;
  requestHash: string;
  scopeHash: string;
  sourceMode: string;
  maxChargeCredits: number;
  estimatedCredits: number;
  scope: RunScope;
  routineId?: string;
  routineOccurrenceAt?: Date;
}

/**
 * Inside the caller's transaction, which holds the workspace's ledger lock and has checked the
 * balance: the run row, the reservation of its maximum, its stored answer and its job. The job is
 * enqueued before commit: if Redis refuses, the transaction rolls back and nothing is reserved
 * (the processor retries while the row is not yet visible).
 */
export async function insertQueuedRun(tx: DbTx, queues: Queues, run: NewRun) {
  const { row } = await submit({
    write: async () => {
      const created = await tx.workflowRun.create({ data: { ...run, scope: run.scope as unknown as Prisma.InputJsonValue } });
      await appendEntry(tx, {
        workspaceId: run.workspaceId,
        kind: "reserve",
        amount: -run.maxChargeCredits,
        runId: created.id,
        note: "reserved up to the approved maximum",
      });
      const answer = toRunRecord(created);
      await tx.workflowRun.update({ where: { id: created.id }, data: { response: answer as unknown as Prisma.InputJsonValue } });
      return { row: created, created: true };
    },
    enqueue: (created) => queues.enqueue("workflow.run.v1", { runId: created.id }, { jobId: runJobId(created.id) }),
    // The refusal propagates and rolls back the caller's transaction: the row and the reservation.
    undo: async () => undefined,
  });
  return row;
}

/** The job id of a run's first step (its later steps are queued by their child jobs' ends). */
export const runJobId = jobIds.run;

export async function getRun(db: Db, userId: string, params: { entityId: string; skillId: string; runId: string }) {
  const entity = await entityForUser(db, userId, params.entityId);
  const row = await db.workflowRun.findFirst({ where: { id: params.runId, entityId: entity.id, skillId: params.skillId } });
  if (!row) throw new AppError("not_found", "Run was not found.");
  return toRunRecord(row);
}

export async function listRuns(db: Db, userId: string, entityId: string, limit = 100) {
  const entity = await entityForUser(db, userId, entityId);
  const rows = await db.workflowRun.findMany({
    where: { entityId: entity.id },
    orderBy: [{ createdAt: "desc" }, { id: "asc" }],
    take: limit,
  });
  return { entity_id: entity.id, runs: rows.map(toRunRecord), count: rows.length };
}
