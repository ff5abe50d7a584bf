import { entityForUser, requireWriter } from "../../access/workspaces/access.js";
import { jobIds } from "../../jobs/ids.js";
import { relayStaged, stageJob } from "../../jobs/outbox.js";
import { canonicalJson, sha256Hex } from "../../platform/canonical.js";
import type { Db, DbTx, Prisma } from "../../platform/db.js";
import type { AppDeps } from "../../platform/deps.js";
import { AppError, ValidationFailed } from "../../platform/errors.js";
import { appendEntry, balance, lockWorkspaceLedger } from "../billing/ledger.js";
import type { RunScope, SourceMode } from "../billing/pricing.js";
import { currentScope, quoteFor } from "../billing/quotes.js";
import { skillForUser, skillPath } from "../skills/service.js";
import type { CreateRunInput, CreateRunQuery, RunRecord } from "./schemas.js";

/**
 * Workflow runs: an approved quote becomes a run. The approval names the quoted scope_hash and the
 * maximum the caller accepts; the maximum is reserved from the workspace's credits, the run is queued,
 * and it is settled at its actual cost when it ends (never above the maximum; nothing when it fails).
 */
interface RunRow {
  id: string;
  skillId: string;
  skillKey: string;
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
    skill_id: row.skillKey,
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
      self: `${skillPath(row.entityId, row.skillKey)}/runs/${row.id}`,
      analysis: row.analysisId ? `/agent/v1/analysis/${row.analysisId}` : null,
      collection_job: row.collectionJobId ? `/agent/v1/ingest/collection/jobs/${row.collectionJobId}` : null,
    },
  };
}

const refuseMaximum = (msg: string, type: string) => new ValidationFailed([{ loc: ["body", "max_charge_credits"], msg, type }]);

/** The quote a run request approves, and the maximum it approves. */
interface Approval {
  quote: { id: string; sourceMode: string; estimatedCredits: number };
  scopeHash: string;
  maxChargeCredits: number;
  current: Awaited<ReturnType<typeof currentScope>>;
  /** A bare approval takes a quote no run has used yet; checked again under the ledger lock. */
  unusedQuote: boolean;
}

/** `scope_hash` and `max_charge_credits` name a quote of the caller's and a maximum within it. */
async function explicitApproval(
  db: Db,
  userId: string,
  skill: { id: string; key: string; entityId: string },
  input: { scope_hash: string; max_charge_credits: number },
  query: CreateRunQuery,
): Promise<Approval> {
  const quote = await db.quote.findFirst({
    where: { userId, skillId: skill.id, scopeHash: input.scope_hash },
    orderBy: { createdAt: "desc" },
  });
  if (!quote) throw new AppError("stale_quote", "No quote of this skill matches scope_hash; request a new quote.");
  if (query.source_mode !== undefined && query.source_mode !== quote.sourceMode) {
    throw new ValidationFailed([
      { loc: ["query", "source_mode"], msg: `the approved quote is for source_mode ${quote.sourceMode}`, type: "value_error" },
    ]);
  }
  const current = await currentScope(db, userId, skill.entityId, skill.key, quote.sourceMode as SourceMode);
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
  return { quote, scopeHash: input.scope_hash, maxChargeCredits: input.max_charge_credits, current, unusedQuote: false };
}

/**
 * A request without scope_hash and max_charge_credits approves the caller's newest quote of the skill
 * for the source mode, at its maximum, when that quote is unexpired, prices the skill's current scope
 * and no run has used it. Otherwise nothing runs: the answer is 409 `approval_required` with a fresh
 * quote, which the same call approves once the caller has reviewed it.
 */
async function latestQuoteApproval(
  db: Db,
  userId: string,
  skill: { id: string; key: string; entityId: string },
  sourceMode: SourceMode,
): Promise<Approval> {
  const current = await currentScope(db, userId, skill.entityId, skill.key, sourceMode);
  const quote = await db.quote.findFirst({
    where: { userId, skillId: skill.id, sourceMode, scopeHash: current.hash, expiresAt: { gt: new Date() } },
    orderBy: { createdAt: "desc" },
  });
  if (quote && !(await db.workflowRun.findFirst({ where: { quoteId: quote.id }, select: { id: true } }))) {
    return { quote, scopeHash: quote.scopeHash, maxChargeCredits: quote.maxChargeCredits, current, unusedQuote: true };
  }
  const offer = await quoteFor(db, userId, current, sourceMode);
  throw new AppError(
    "approval_required",
    `Nothing ran: a run of this skill is estimated at ${offer.estimated_credits} credits and charged at most ${offer.max_charge_credits}. ` +
      "Review the quote; the same request before it expires approves it at that maximum, or send its scope_hash with an approved max_charge_credits.",
    { extra: { quote: offer } },
  );
}

export async function createRun(
  deps: Pick<AppDeps, "db" | "queues" | "logger">,
  userId: string,
  params: { entityId: string; skillId: string; idempotencyKey: string },
  input: CreateRunInput,
  query: CreateRunQuery = { source_mode: undefined },
): Promise<{ status: number; body: RunRecord; replayed: boolean }> {
  const { db } = deps;
  const { entity: skillEntity, skill } = await skillForUser(db, userId, params.entityId, params.skillId);
  await requireWriter(db, userId, skillEntity.workspaceId, "run skills");
  const explicit =
    input.scope_hash !== undefined && input.max_charge_credits !== undefined
      ? { scope_hash: input.scope_hash, max_charge_credits: input.max_charge_credits }
      : undefined;
  const sourceMode = query.source_mode ?? "saved";
  // What the key stands for: the approval sent, or for a bare request the source mode it asks for.
  const requestHash = sha256Hex("run-request-v1", skill.entityId, skill.id, canonicalJson(explicit ?? { source_mode: sourceMode }));

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

  const approval = explicit
    ? await explicitApproval(db, userId, skill, explicit, query)
    : await latestQuoteApproval(db, userId, skill, sourceMode);
  const { quote, current } = approval;
  const entity = current.entity;

  // The run's job is staged in the transaction and sent after it: a queue that is down now refuses the request first.
  await deps.queues.assertAvailable();
  const created = await db.$transaction(
    async (tx) => {
      // Same key in parallel: one creates, the others wait here and replay.
      await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext(${`run-key:${userId}:${params.idempotencyKey}`}))`;
      const raced = await tx.workflowRun.findUnique({
        where: { userId_idempotencyKey: { userId, idempotencyKey: params.idempotencyKey } },
      });
      if (raced) return { row: raced, replayed: true, staged: null };

      await lockWorkspaceLedger(tx, entity.workspaceId);
      if (approval.unusedQuote && (await tx.workflowRun.findFirst({ where: { quoteId: quote.id }, select: { id: true } }))) {
        throw new AppError("approval_required", "Another run used this quote meanwhile; request a new quote and review it.");
      }
      const available = await balance(tx, entity.workspaceId);
      if (available < approval.maxChargeCredits) {
        throw new AppError(
          "insufficient_credits",
          `The workspace has ${available} credits; this run needs ${approval.maxChargeCredits} reserved.`,
          { extra: { balance: available, required: approval.maxChargeCredits } },
        );
      }
      const { row, staged } = await insertQueuedRun(tx, {
        skillId: skill.id,
        skillKey: skill.key,
        entityId: entity.id,
        workspaceId: entity.workspaceId,
        userId,
        quoteId: quote.id,
        idempotencyKey: params.idempotencyKey,
        requestHash,
        scopeHash: approval.scopeHash,
        sourceMode: quote.sourceMode,
        maxChargeCredits: approval.maxChargeCredits,
        estimatedCredits: quote.estimatedCredits,
        scope: current.scope,
      });
      return { row, replayed: false, staged };
    },
    { timeout: 20_000, maxWait: 10_000 },
  );
  if (created.replayed) {
    const again = await replay();
    if (again) return again;
  }
  if (created.staged) await sendStagedRun(deps, created.staged);
  return { status: 202, body: toRunRecord(created.row), replayed: false };
}

export interface NewRun {
  skillId: string;
  skillKey: string;
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
 * balance: the run row, the reservation of its maximum, its stored answer and its job, staged in
 * the job outbox. The caller sends the staged job once the transaction has committed
 * (`relayStaged`), so the worker always finds the run; if that send fails, the worker process's
 * relay sends it later. The caller checks the queue is available before the transaction, so a
 * request made while Redis is down is refused with nothing reserved.
 */
export async function insertQueuedRun(tx: DbTx, run: NewRun) {
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
  const staged = await stageJob(tx, "workflow.run.v1", { runId: created.id }, runJobId(created.id));
  return { row: created, staged };
}

/** Sends a run's staged first step now; a refusal is left to the relay (the run is stored and reserved). */
export async function sendStagedRun(deps: Pick<AppDeps, "db" | "queues" | "logger">, staged: string): Promise<void> {
  await relayStaged(deps, { ids: [staged] }).catch((err: unknown) =>
    deps.logger.warn({ err }, "a run's first step stays staged; the outbox relay sends it"),
  );
}

/** The job id of a run's first step (its later steps are queued by their child jobs' ends). */
export const runJobId = jobIds.run;

export async function getRun(db: Db, userId: string, params: { entityId: string; skillId: string; runId: string }) {
  const entity = await entityForUser(db, userId, params.entityId);
  const row = await db.workflowRun.findFirst({ where: { id: params.runId, entityId: entity.id, skillKey: params.skillId } });
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
