import { JobCancelled } from "../../jobs/cancellation.js";
import { type EndedJob, endedWith } from "../../jobs/lifecycle.js";
import type { AppDeps } from "../../platform/deps.js";
import { appendEntry, lockWorkspaceLedger } from "../billing/ledger.js";
import { price, type RunScope } from "../billing/pricing.js";
import { analyseStep, type CollectOutcome, collectStep, WAITING } from "./steps.js";

/**
 * Executes a workflow run as steps: collect (when refreshing), analyse, then settle. A step that
 * waits on its child job ends the run job (`waiting`); the child's end enqueues the next run job.
 * The settlement releases the whole reservation and charges the actual cost, capped at the
 * approved maximum, in one transaction guarded by the run's status, so a retried job can never
 * settle twice and a cancelled run is never settled again. A run that fails, or that could collect
 * nothing because every platform was blocked, is charged nothing.
 */
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

export type Outcome =
  | { status: "completed"; usage: { platforms: number; sources: number } }
  | { status: "cancelled"; usage: { platforms: number; sources: number } }
  | { status: "blocked"; error: string }
  | { status: "failed"; error: string };

type Deps = Pick<AppDeps, "db" | "pool" | "queues" | "redis" | "config" | "logger" | "reads">;

/**
 * Settles a live run and answers the end it wrote, for its caller to announce (the worker runtime, or
 * `endJob` outside a worker); null when it had already ended (nothing is written then).
 */
export async function settle(deps: Deps, runId: string, outcome: Outcome): Promise<EndedJob | null> {
  const settled = await deps.db.$transaction(async (tx) => {
    const run = await tx.workflowRun.findUniqueOrThrow({ where: { id: runId } });
    await lockWorkspaceLedger(tx, run.workspaceId);
    const fresh = await tx.workflowRun.findUniqueOrThrow({ where: { id: runId } });
    if (!["queued", "running"].includes(fresh.status)) return false;
    // A run cancelled before any work was done (nothing collected, nothing analysed) costs nothing,
    // not even the base fee: the cancel charges only the work done.
    const didWork =
      outcome.status === "completed" || (outcome.status === "cancelled" && outcome.usage.platforms + outcome.usage.sources > 0);
    const charge = didWork ? Math.min(price(fresh.scope as unknown as RunScope, outcome.usage).credits, fresh.maxChargeCredits) : 0;
    await appendEntry(tx, {
      workspaceId: fresh.workspaceId,
      kind: "release",
      amount: fresh.maxChargeCredits,
      runId,
      note: "reservation released",
    });
    if (charge > 0) {
      await appendEntry(tx, {
        workspaceId: fresh.workspaceId,
        kind: "settle",
        amount: -charge,
        runId,
        note: outcome.status === "cancelled" ? "cost of the work done before the cancel" : "actual cost",
      });
    }
    await tx.workflowRun.update({
      where: { id: runId },
      data: {
        status: outcome.status,
        chargedCredits: charge,
        error: outcome.status === "completed" ? null : "error" in outcome ? outcome.error : "cancelled by the caller",
        finishedAt: new Date(),
      },
    });
    return true;
  });
  if (!settled) return null;
  const run = await deps.db.workflowRun.findUnique({ where: { id: runId } });
  return {
    kind: "workflow_run",
    id: runId,
    status: outcome.status,
    data: {
      entity_id: run?.entityId ?? null,
      skill_id: run?.skillKey ?? null,
      charged_credits: run?.chargedCredits ?? 0,
      ...("error" in outcome ? { error: outcome.error } : {}),
    },
  };
}

export function runContext(run: {
  id: string;
  userId: string;
  entityId: string;
  workspaceId: string;
  skillId: string;
  scope: unknown;
  collectionJobId: string | null;
  analysisId: string | null;
}): RunContext {
  return {
    id: run.id,
    userId: run.userId,
    entityId: run.entityId,
    workspaceId: run.workspaceId,
    skillId: run.skillId,
    scope: run.scope as RunScope,
    collectionJobId: run.collectionJobId,
    analysisId: run.analysisId,
  };
}

/** Runs the run's next step; answers where it stands, marked with its end when this step settled it (`endedWith`). */
export async function executeRun(deps: AppDeps, runId: string): Promise<{ status: string }> {
  const run = await deps.db.workflowRun.findUnique({ where: { id: runId } });
  // The first step is sent only once its run has committed (the job outbox), so a missing run was removed.
  if (!run) {
    deps.logger.warn({ runId }, "a workflow run's job found no run; nothing to do");
    return { status: "missing" };
  }
  const started = await deps.db.workflowRun.updateMany({
    where: { id: run.id, status: { in: ["queued", "running"] } },
    data: { status: "running" },
  });
  if (started.count === 0) return { status: run.status };

  const context = runContext(run);
  try {
    // Authorised when it was approved: a starter who has since left the workspace or lost the editor
    // role does not stop it (running work finishes; their next request is refused).
    let collected: CollectOutcome | null = null;
    if (context.scope.source_mode === "refresh") {
      const step = await collectStep(deps, context);
      if (step === WAITING) return { status: WAITING };
      collected = step;
      if (collected.platformsCollected === 0 && collected.blocked.length > 0) {
        const error = `Every platform was blocked: ${collected.blocked.join("; ")}`;
        return endedWith({ status: "blocked" }, await settle(deps, run.id, { status: "blocked", error }));
      }
    }
    const analysed = await analyseStep(deps, context);
    if (analysed === WAITING) return { status: WAITING };
    const usage = { platforms: collected?.platformsCollected ?? 0, sources: Math.min(analysed.sourcesUsed, context.scope.max_sources) };
    return endedWith({ status: "completed" }, await settle(deps, run.id, { status: "completed", usage }));
  } catch (thrown) {
    // Cancelled while this step ran: the cancel settled the run and its children.
    if (thrown instanceof JobCancelled) return { status: "cancelled" };
    // Retried, or ended at once when retrying cannot help (an entity gone, a child that ended badly, a bad
    // payload): the worker runtime decides, and settles the run through markRunFailed when none follows.
    throw thrown;
  }
}

/** A run whose step failed for the last time: settled failed, its unused reservation released; answers the end it wrote. */
export function markRunFailed(deps: AppDeps, runId: string, err: Error): Promise<EndedJob | null> {
  return settle(deps, runId, { status: "failed", error: err.message.slice(0, 1000) });
}
