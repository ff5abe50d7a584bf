import { cancelAnalysis, enqueueAnalysis, submitAnalysis } from "../../insights/analysis/jobs.js";
import type { RunInput } from "../../insights/analysis/schemas.js";
import { cancelJobRow } from "../../intake/collection/cancel.js";
import { REQUESTABLE_PLATFORMS } from "../../intake/collection/schemas.js";
import { createCollectionJob } from "../../intake/collection/service.js";
import { JobCancelled } from "../../jobs/cancellation.js";
import { isLive } from "../../jobs/states.js";
import type { AppDeps } from "../../platform/deps.js";
import { AppError } from "../../platform/errors.js";
import type { RunContext } from "./execute.js";

/**
 * A workflow run's two child jobs. Each step starts its child once (idempotent on the run id,
 * so a retried step finds the child it started) and then reads it: while the child is live the
 * step answers `waiting` and the run job ends, holding no worker slot. The child's end enqueues
 * the run's next job (src/jobs/lifecycle.ts, `continueWaitingRuns`), which runs these steps again.
 */
export const WAITING = "waiting" as const;

export interface CollectOutcome {
  collectionJobId: string | null;
  platformsCollected: number;
  blocked: string[];
}
export interface AnalyseOutcome {
  analysisId: string;
  sourcesUsed: number;
}

type ChildDeps = AppDeps;

export async function collectStep(deps: ChildDeps, run: RunContext): Promise<CollectOutcome | typeof WAITING> {
  const requestable = new Set<string>(REQUESTABLE_PLATFORMS);
  const platforms = run.scope.platforms.filter((p) => requestable.has(p));
  const unsupported = run.scope.platforms.filter((p) => !requestable.has(p)).map((p) => `${p}: no server-side collector`);
  if (platforms.length === 0) {
    return { collectionJobId: null, platformsCollected: 0, blocked: unsupported.length > 0 ? unsupported : ["no platforms to collect"] };
  }
  if (!run.collectionJobId) {
    const created = await createCollectionJob(
      deps,
      run.userId,
      {
        route: "collection",
        entityId: run.entityId,
        objective: run.scope.question,
        questions: [],
        depth: run.scope.depth,
        platforms,
        collectionOnly: true,
        idempotencyKey: `workflow-run.${run.id}`,
      },
      { forRun: true },
    );
    await deps.db.workflowRun.update({ where: { id: run.id }, data: { collectionJobId: created.job_id } });
    run.collectionJobId = created.job_id;
    if (await cancelledMeanwhile(deps, run.id)) {
      const child = await deps.db.collectionJob.findUniqueOrThrow({ where: { id: created.job_id } });
      if (isLive(child.status)) await cancelJobRow(deps, child, "cancelled with its workflow run");
      throw new JobCancelled("The workflow run");
    }
  }
  const job = await deps.db.collectionJob.findUniqueOrThrow({ where: { id: run.collectionJobId } });
  if (isLive(job.status)) return WAITING;
  if (job.status !== "completed") {
    throw new ChildEnded(`The collection job ${job.status === "cancelled" ? "was cancelled" : `failed: ${job.error ?? "unknown error"}`}`);
  }
  return collectedFrom(job, platforms, unsupported);
}

/** What a finished collection job collected, per the run's platforms. */
export function collectedFrom(job: { id: string; progress: unknown }, platforms: string[], unsupported: string[] = []): CollectOutcome {
  const progress = (job.progress ?? {}) as Record<string, { status?: string; error?: string | null; reason?: string | null }>;
  const collected = platforms.filter((p) => progress[p]?.status === "completed");
  const blocked = [
    ...unsupported,
    ...platforms
      .filter((p) => progress[p]?.status !== "completed")
      .map((p) => `${p}: ${progress[p]?.reason ?? progress[p]?.error ?? progress[p]?.status ?? "not collected"}`),
  ];
  return { collectionJobId: job.id, platformsCollected: collected.length, blocked };
}

export async function analyseStep(deps: ChildDeps, run: RunContext): Promise<AnalyseOutcome | typeof WAITING> {
  if (!run.analysisId) {
    // Through the analysis service, as POST /agent/v1/analysis/run creates one; the request id
    // makes a retried step find the analysis it already started.
    const { analysis } = await submitAnalysis(
      deps,
      run.userId,
      {
        question: run.scope.question.slice(0, 1000),
        entity_id: run.entityId,
        depth: run.scope.depth,
        request_id: `workflow-run:${run.id}`,
        platforms: run.scope.platforms as RunInput["platforms"],
        project_id: undefined,
        search_mode: undefined,
        provided_sources: undefined,
      },
      { forRun: true },
    );
    // Queued before the run names it: a refused enqueue removes the analysis again and fails this step,
    // whose retry submits it anew, so the run never waits on an analysis no queue holds.
    await deps.db.workflowRun.update({ where: { id: run.id }, data: { analysisId: analysis.id } });
    run.analysisId = analysis.id;
    if (await cancelledMeanwhile(deps, run.id)) {
      await cancelAnalysis(deps, analysis.id).catch(() => undefined);
      throw new JobCancelled("The workflow run");
    }
  }
  const done = await deps.db.analysis.findUniqueOrThrow({ where: { id: run.analysisId } });
  // Still queued: its entry is added again (a no-op while the queue holds it; its job id names it).
  if (done.status === "queued") await enqueueAnalysis(deps, done.id);
  if (isLive(done.status)) return WAITING;
  if (done.status === "failed" || done.status === "cancelled") {
    throw new ChildEnded(
      done.status === "cancelled" ? "The analysis was cancelled" : `The analysis failed: ${done.error ?? "unknown error"}`,
    );
  }
  const result = (done.result ?? {}) as { data?: { evidence?: { content_id?: string }[] } };
  const sources = new Set((result.data?.evidence ?? []).map((e) => e.content_id).filter(Boolean));
  return { analysisId: done.id, sourcesUsed: sources.size };
}

/**
 * A cancel that committed while this step was starting its child could not see the child: the
 * step cancels it itself, so no child of a cancelled run runs on.
 */
async function cancelledMeanwhile(deps: ChildDeps, runId: string): Promise<boolean> {
  const row = await deps.db.workflowRun.findUnique({ where: { id: runId }, select: { status: true } });
  return row?.status === "cancelled";
}

/** A child job ended without a result the run can use: the run fails (retrying cannot help). */
export class ChildEnded extends AppError {
  readonly permanent = true;
  constructor(detail: string) {
    super("upstream_error", detail);
  }
}
