import type { RunInput } from "../analysis/schemas.js";
import { startAnalysis } from "../analysis/service.js";
import { REQUESTABLE_PLATFORMS } from "../collection/schemas.js";
import { createCollectionJob } from "../collection/service.js";
import type { AppDeps } from "../platform/deps.js";
import { AppError } from "../platform/errors.js";
import { deriveJobId } from "../platform/queues.js";
import type { AnalyseOutcome, CollectOutcome, RunContext, RunExecutor } from "./execute.js";

/**
 * The executor the worker uses: a refresh queues a collection job (collection only) through the
 * collection service and waits for it; the analysis is queued through the analysis contract (an
 * `analyses` row plus `analysis.run.v1`) and waited for. Both are idempotent on the run id, so a
 * retried run job finds the collection job and analysis it already started.
 */
const POLL_MS = 250;

async function waitFor<T>(read: () => Promise<T | undefined>, timeoutMs: number, what: string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`${what} did not finish within ${Math.round(timeoutMs / 1000)} s`);
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

export function queueExecutor(options: { timeoutMs?: number } = {}): RunExecutor {
  const timeoutMs = options.timeoutMs ?? 30 * 60 * 1000;
  return {
    async collect(deps: AppDeps, run: RunContext): Promise<CollectOutcome> {
      const requestable = new Set<string>(REQUESTABLE_PLATFORMS);
      const platforms = run.scope.platforms.filter((p) => requestable.has(p));
      const unsupported = run.scope.platforms.filter((p) => !requestable.has(p)).map((p) => `${p}: no server-side collector`);
      if (platforms.length === 0)
        return {
          collectionJobId: null,
          platformsCollected: 0,
          blocked: unsupported.length > 0 ? unsupported : ["no platforms to collect"],
        };
      const created = await createCollectionJob(
        deps,
        run.userId,
        {
          entity_id: run.entityId,
          objective: run.scope.question.slice(0, 1000).padEnd(3, "."),
          collection_only: true,
          questions: [],
          depth: run.scope.depth,
          platforms: platforms as (typeof REQUESTABLE_PLATFORMS)[number][],
          idempotency_key: `workflow-run.${run.id}`,
        },
        "collection",
      );
      const job = await waitFor(
        async () => {
          const row = await deps.db.collectionJob.findUnique({ where: { id: created.job_id } });
          return row && (row.status === "completed" || row.status === "failed") ? row : undefined;
        },
        timeoutMs,
        "The collection job",
      );
      if (job.status === "failed") throw new Error(`The collection job failed: ${job.error ?? "unknown error"}`);
      const progress = (job.progress ?? {}) as Record<string, { status?: string; error?: string | null; reason?: string | null }>;
      const collected = platforms.filter((p) => progress[p]?.status === "completed");
      const blocked = [
        ...unsupported,
        ...platforms
          .filter((p) => progress[p]?.status !== "completed")
          .map((p) => `${p}: ${progress[p]?.reason ?? progress[p]?.error ?? progress[p]?.status ?? "not collected"}`),
      ];
      return { collectionJobId: job.id, platformsCollected: collected.length, blocked };
    },

    async analyse(deps: AppDeps, run: RunContext): Promise<AnalyseOutcome> {
      // Through the analysis service, as POST /agent/v1/analysis/run creates one; the request id
      // makes a retried run job find the analysis it already started.
      const { analysis } = await startAnalysis(deps.db, run.userId, {
        question: run.scope.question.slice(0, 1000),
        entity_id: run.entityId,
        depth: run.scope.depth,
        request_id: `workflow-run:${run.id}`,
        platforms: run.scope.platforms as RunInput["platforms"],
        project_id: undefined,
        search_mode: undefined,
        provided_sources: undefined,
      });
      await deps.db.workflowRun.update({ where: { id: run.id }, data: { analysisId: analysis.id } });
      await deps.queues.enqueue("analysis.run.v1", { analysisId: analysis.id }, { jobId: deriveJobId("analysis", analysis.id) });
      const done = await waitFor(
        async () => {
          const row = await deps.db.analysis.findUnique({ where: { id: analysis.id } });
          return row && ["completed", "partial", "failed"].includes(row.status) ? row : undefined;
        },
        timeoutMs,
        "The analysis",
      );
      if (done.status === "failed") throw new AppError("upstream_error", `The analysis failed: ${done.error ?? "unknown error"}`);
      const result = (done.result ?? {}) as { data?: { evidence?: { content_id?: string }[] } };
      const sources = new Set((result.data?.evidence ?? []).map((e) => e.content_id).filter(Boolean));
      return { analysisId: done.id, sourcesUsed: sources.size };
    },
  };
}
