import { UnrecoverableError } from "bullmq";
import { appendEntry, lockWorkspaceLedger } from "../billing/ledger.js";
import { price, type RunScope } from "../billing/pricing.js";
import type { AppDeps } from "../platform/deps.js";
import { AppError, toError } from "../platform/errors.js";
import { entityForUser } from "../workspaces/access.js";

/**
 * Executes a queued workflow run: collect (when refreshing), analyse, then settle. The settlement
 * releases the whole reservation and charges the actual cost, capped at the approved maximum, in one
 * transaction guarded by the run's status, so a retried job can never settle twice. A run that fails on
 * its last attempt, or that could collect nothing because every platform was blocked, is charged nothing.
 */
export interface CollectOutcome {
  collectionJobId: string | null;
  platformsCollected: number;
  blocked: string[];
}
export interface AnalyseOutcome {
  analysisId: string;
  sourcesUsed: number;
}
export interface RunExecutor {
  collect(deps: AppDeps, run: RunContext): Promise<CollectOutcome>;
  analyse(deps: AppDeps, run: RunContext, collected: CollectOutcome | null): Promise<AnalyseOutcome>;
}
export interface RunContext {
  id: string;
  userId: string;
  entityId: string;
  workspaceId: string;
  skillId: string;
  scope: RunScope;
  collectionJobId: string | null;
  analysisId: string | null;
}

export class RunNotVisibleYet extends Error {
  override name = "RunNotVisibleYet";
}

type Outcome =
  | { status: "completed"; usage: { platforms: number; sources: number } }
  | { status: "blocked"; error: string }
  | { status: "failed"; error: string };

async function settle(deps: AppDeps, runId: string, outcome: Outcome): Promise<void> {
  await deps.db.$transaction(async (tx) => {
    const run = await tx.workflowRun.findUniqueOrThrow({ where: { id: runId } });
    await lockWorkspaceLedger(tx, run.workspaceId);
    const fresh = await tx.workflowRun.findUniqueOrThrow({ where: { id: runId } });
    if (!["queued", "running"].includes(fresh.status)) return;
    const charge =
      outcome.status === "completed"
        ? Math.min(price(fresh.scope as unknown as RunScope, outcome.usage).credits, fresh.maxChargeCredits)
        : 0;
    await appendEntry(tx, {
      workspaceId: fresh.workspaceId,
      kind: "release",
      amount: fresh.maxChargeCredits,
      runId,
      note: "reservation released",
    });
    if (charge > 0) {
      await appendEntry(tx, { workspaceId: fresh.workspaceId, kind: "settle", amount: -charge, runId, note: "actual cost" });
    }
    await tx.workflowRun.update({
      where: { id: runId },
      data: {
        status: outcome.status,
        chargedCredits: charge,
        error: outcome.status === "completed" ? null : outcome.error,
        finishedAt: new Date(),
      },
    });
  });
}

export async function executeRun(deps: AppDeps, runId: string, executor: RunExecutor, attempt: { final: boolean }): Promise<string> {
  const run = await deps.db.workflowRun.findUnique({ where: { id: runId } });
  if (!run) throw new RunNotVisibleYet(`Run ${runId} is not visible yet`);
  if (!["queued", "running"].includes(run.status)) return run.status;
  await deps.db.workflowRun.update({ where: { id: run.id }, data: { status: "running" } });

  const context: RunContext = {
    id: run.id,
    userId: run.userId,
    entityId: run.entityId,
    workspaceId: run.workspaceId,
    skillId: run.skillId,
    scope: run.scope as unknown as RunScope,
    collectionJobId: run.collectionJobId,
    analysisId: run.analysisId,
  };
  try {
    // The caller must still see the entity when the run executes.
    await entityForUser(deps.db, run.userId, run.entityId);
    let collected: CollectOutcome | null = null;
    if (context.scope.source_mode === "refresh") {
      collected = await executor.collect(deps, context);
      await deps.db.workflowRun.update({ where: { id: run.id }, data: { collectionJobId: collected.collectionJobId } });
      context.collectionJobId = collected.collectionJobId;
      if (collected.platformsCollected === 0 && collected.blocked.length > 0) {
        await settle(deps, run.id, { status: "blocked", error: `Every platform was blocked: ${collected.blocked.join("; ")}` });
        return "blocked";
      }
    }
    const analysed = await executor.analyse(deps, context, collected);
    await deps.db.workflowRun.update({ where: { id: run.id }, data: { analysisId: analysed.analysisId } });
    await settle(deps, run.id, {
      status: "completed",
      usage: { platforms: collected?.platformsCollected ?? 0, sources: Math.min(analysed.sourcesUsed, context.scope.max_sources) },
    });
    return "completed";
  } catch (thrown) {
    const err = toError(thrown);
    // Retrying cannot help a run whose entity is gone or whose payload is bad.
    const permanent = err instanceof UnrecoverableError || (err instanceof AppError && err.status === 404);
    if (attempt.final || permanent) await settle(deps, run.id, { status: "failed", error: err.message.slice(0, 1000) });
    throw permanent && !(err instanceof UnrecoverableError) ? new UnrecoverableError(err.message) : err;
  }
}
