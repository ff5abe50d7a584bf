import { isUuid } from "../../../access/workspaces/access.js";
import { type KnowledgeScope, resolveScope, resolveWritableScope } from "../../../insights/knowledge/scope.js";
import type { Db, Prisma } from "../../../platform/db.js";
import { AppError, notFound } from "../../../platform/errors.js";
import { actionInScope } from "../service.js";
import { plannedChanges } from "./rules.js";
import {
  type CreateExecutionInput,
  EXECUTION_BASIS,
  type ExecutionRecord,
  type ListExecutionsQuery,
  REVIEW_FIELDS,
  type UpdateExecutionInput,
} from "./schemas.js";

/**
 * Action executions: an approved handoff of an action to an executor and its reported outcome.
 * Every member of the action's workspace reads them; members who may write actions create them
 * and report on them (a viewer gets 403); only a reviewer (`owner` or `admin`) decides the review.
 * The status rules are in `rules.ts`.
 */
type ExecutionRow = Prisma.ActionExecutionGetPayload<object>;

/** Workspace roles that review an execution's report and grant its training scopes. */
export const REVIEWER_ROLES: readonly string[] = ["owner", "admin"];

/** Concurrent changes of one execution: each is applied to the row it was checked against, re-checked after a lost race. */
const MAX_ATTEMPTS = 5;

function toRecord(row: ExecutionRow): ExecutionRecord {
  return {
    id: row.id,
    action_id: row.actionId,
    entity_id: row.entityId,
    workspace_id: row.workspaceId,
    executor_platform: row.executorPlatform,
    approved_for_execution: true,
    approved_by: row.approvedBy,
    steps: row.steps,
    status: row.status as ExecutionRecord["status"],
    step_results: row.stepResults as ExecutionRecord["step_results"],
    outcome_summary: row.outcomeSummary,
    metrics: row.metrics as ExecutionRecord["metrics"],
    review_status: row.reviewStatus as ExecutionRecord["review_status"],
    reviewed_by: row.reviewedBy,
    reviewed_at: row.reviewedAt?.toISOString() ?? null,
    training_scopes: row.trainingScopes as ExecutionRecord["training_scopes"],
    revision: row.revision,
    created_by: row.createdBy,
    updated_by: row.updatedBy,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
    finished_at: row.finishedAt?.toISOString() ?? null,
  };
}

export async function createExecution(db: Db, userId: string, actionId: string, input: CreateExecutionInput): Promise<ExecutionRecord> {
  const { row: action } = await actionInScope(db, userId, actionId, true);
  if (action.status === "dismissed") {
    throw new AppError("conflict", "The action was dismissed: reopen it (change its status) before recording an execution of it.", {
      extra: { action_status: action.status },
    });
  }
  const row = await db.actionExecution.create({
    data: {
      workspaceId: action.workspaceId,
      entityId: action.entityId,
      actionId: action.id,
      executorPlatform: input.executor_platform,
      approvedBy: userId,
      steps: input.steps,
      createdBy: userId,
      updatedBy: userId,
    },
  });
  return toRecord(row);
}

export async function listExecutions(db: Db, userId: string, actionId: string, query: ListExecutionsQuery) {
  const { row: action } = await actionInScope(db, userId, actionId, false);
  const where = {
    actionId: action.id,
    ...(query.status ? { status: query.status } : {}),
    ...(query.review_status ? { reviewStatus: query.review_status } : {}),
  };
  const [rows, total] = await db.$transaction([
    db.actionExecution.findMany({ where, orderBy: [{ createdAt: "asc" }, { id: "asc" }], take: query.limit, skip: query.offset }),
    db.actionExecution.count({ where }),
  ]);
  const executions = rows.map(toRecord);
  return {
    action_id: action.id,
    executions,
    count: executions.length,
    total,
    limit: query.limit,
    offset: query.offset,
    next_offset: executions.length > 0 && query.offset + executions.length < total ? query.offset + executions.length : null,
    basis: EXECUTION_BASIS,
  };
}

async function executionInScope(
  db: Db,
  userId: string,
  executionId: string,
  write: boolean,
): Promise<{ row: ExecutionRow; scope: KnowledgeScope }> {
  if (!isUuid(executionId)) throw notFound("Execution");
  const row = await db.actionExecution.findUnique({ where: { id: executionId } });
  if (!row) throw notFound("Execution");
  // Not a member of the execution's workspace: the same 404 as an unknown id.
  const scope = await (write ? resolveWritableScope : resolveScope)(db, userId, { entity_id: row.entityId }).catch((err: unknown) => {
    if (err instanceof AppError && err.code === "not_found") throw notFound("Execution");
    throw err;
  });
  return { row, scope };
}

export async function getExecution(db: Db, userId: string, executionId: string): Promise<ExecutionRecord> {
  return toRecord((await executionInScope(db, userId, executionId, false)).row);
}

export async function updateExecution(db: Db, userId: string, executionId: string, input: UpdateExecutionInput): Promise<ExecutionRecord> {
  const found = await executionInScope(db, userId, executionId, true);
  let row = found.row;
  const sent = REVIEW_FIELDS.filter((field) => input[field] !== undefined);
  if (sent.length > 0 && !REVIEWER_ROLES.includes(found.scope.role)) {
    throw new AppError(
      "forbidden",
      `Only a workspace owner or admin reviews an execution (${sent.join(", ")}); your role is ${found.scope.role}.`,
    );
  }
  const stale = (current: ExecutionRow) =>
    new AppError("conflict", "The execution changed since it was read; read it again and send its current revision.", {
      extra: { current_revision: current.revision },
    });
  for (let attempt = 1; ; attempt++) {
    if (input.expected_revision !== undefined && input.expected_revision !== row.revision) throw stale(row);
    const changes = plannedChanges(row, input, userId, new Date());
    if (!changes) return toRecord(row);
    // Applies only to the revision the rules were checked against; a concurrent change is re-checked.
    const updated = await db.actionExecution.updateMany({
      where: { id: row.id, revision: row.revision },
      data: { ...changes, revision: { increment: 1 }, updatedBy: userId },
    });
    const fresh = await db.actionExecution.findUnique({ where: { id: row.id } });
    if (!fresh) throw notFound("Execution");
    if (updated.count === 1) return toRecord(fresh);
    if (attempt >= MAX_ATTEMPTS) throw stale(fresh);
    row = fresh;
  }
}
