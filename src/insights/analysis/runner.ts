import { UnrecoverableError } from "bullmq";
import type { Prisma } from "../../generated/prisma/client.js";
import { type CancelWatch, JobCancelled, watchJob } from "../../jobs/cancellation.js";
import { type EndedJob, endedWith } from "../../jobs/lifecycle.js";
import type { DbTx } from "../../platform/db.js";
import type { AppDeps } from "../../platform/deps.js";
import { AppError } from "../../platform/errors.js";
import { createBulkEmbedder } from "../embed/provider.js";
import { analysisPublication, publishGeneratedRecords } from "../knowledge/publish.js";
import { forgetDeletedCitations } from "./deletions.js";
import { type AnalysisRequest, runEngine } from "./engine.js";
import { appendEvent, hasTerminalEvent } from "./events.js";
import type { Depth, ResultData, SearchMode } from "./schemas.js";
import { TERMINAL_STATUSES } from "./schemas.js";
import { storeThemeSources } from "./theme-sources-store.js";

/**
 * The `analysis.run.v1` job: runs the engine for one analysis row and records every
 * step as an event. The final `result` is stored in one transaction with the row's status,
 * result, insights and the sources behind each insight, so the row and its stream never disagree; when the last attempt fails
 * (or a permanent error ends the job), the worker runtime calls `failAnalysis`, which stores the
 * terminal `error` event with the row's `failed` the same way. A re-delivered job for a finished
 * analysis only repairs a missing terminal event.
 */

async function storeInsights(tx: DbTx, analysisId: string, entityId: string | null, data: ResultData, entityOf: Map<string, string>) {
  await tx.entityInsight.deleteMany({ where: { analysisId } });
  for (const insight of data.insights) {
    const entities = insight.evidence.map((e) => entityOf.get(e.content_id)).filter((id): id is string => Boolean(id));
    const created = await tx.entityInsight.create({
      data: {
        analysisId,
        entityId: entityId ?? mostCommon(entities),
        title: insight.title,
        summary: insight.summary,
        sentiment: insight.sentiment,
        confidence: insight.confidence,
      },
    });
    await tx.insightEvidence.createMany({
      data: insight.evidence.map((e) => ({
        insightId: created.id,
        contentId: e.content_id,
        opinionUnitId: e.opinion_unit_id,
        quote: e.quote,
        startOffset: e.start_offset,
        endOffset: e.end_offset,
      })),
    });
  }
}

function mostCommon(values: string[]): string | null {
  const counts = new Map<string, number>();
  for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1);
  return [...counts.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))[0]?.[0] ?? null;
}

export async function runAnalysisJob(deps: AppDeps, analysisId: string): Promise<{ status: string }> {
  const row = await deps.db.analysis.findUnique({ where: { id: analysisId } });
  if (!row) throw new UnrecoverableError(`Analysis ${analysisId} does not exist`);

  if ((TERMINAL_STATUSES as readonly string[]).includes(row.status)) {
    if (!(await hasTerminalEvent(deps.db, analysisId))) {
      if (row.status === "failed" || row.status === "cancelled")
        await appendEvent(deps, analysisId, "error", { status: row.status, detail: row.error ?? "The analysis failed." });
      else
        await appendEvent(deps, analysisId, "result", {
          ...((row.result as Record<string, unknown> | null) ?? { status: row.status, data: {} }),
        });
    }
    return { status: row.status };
  }

  const started = await deps.db.analysis.updateMany({
    where: { id: analysisId, status: { in: ["queued", "running"] } },
    data: { status: "running" },
  });
  if (started.count === 0) return { status: "cancelled" };
  const cancel = watchJob(deps, "analysis", analysisId, "The analysis");
  try {
    return await analyse(deps, row, cancel);
  } finally {
    cancel.stop();
  }
}

/** A step that stores the run's outcome refuses once the analysis has left `running` (it was cancelled). */
async function stillRunning(tx: DbTx, analysisId: string, data: Prisma.AnalysisUpdateManyMutationInput): Promise<void> {
  const updated = await tx.analysis.updateMany({ where: { id: analysisId, status: "running" }, data });
  if (updated.count === 0) throw new JobCancelled("The analysis");
}

async function analyse(
  deps: AppDeps,
  row: NonNullable<Awaited<ReturnType<AppDeps["db"]["analysis"]["findUnique"]>>>,
  cancel: CancelWatch,
): Promise<{ status: string }> {
  const analysisId = row.id;
  const request: AnalysisRequest = {
    id: row.id,
    userId: row.userId,
    workspaceId: row.workspaceId,
    question: row.question,
    searchMode: (row.searchMode ?? undefined) as SearchMode | undefined,
    platforms: row.platforms,
    depth: row.depth as Depth,
    entityId: row.entityId,
    projectId: row.projectId,
    providedSources: row.providedSources,
  };

  try {
    const output = await runEngine(
      {
        db: deps.db,
        config: deps.config,
        embedder: createBulkEmbedder(deps.config),
        signal: cancel.signal,
        progress: async (step, progress) => {
          await cancel.check();
          await appendEvent(deps, analysisId, "progress", { step, status: "running", progress });
        },
      },
      request,
    );
    const result = { status: output.status, data: output.data };
    await cancel.check();
    for (const item of output.data.evidence) await appendEvent(deps, analysisId, "evidence", { ...item });
    await appendEvent(deps, analysisId, "progress", { step: "finalize", status: "running", progress: 0.95 });
    await appendEvent(deps, analysisId, "result", result, async (tx) => {
      // Originals deleted since they were quoted are cited unavailable, here and in the stored evidence
      // events; the rest are share-locked until this commits, so a deletion after it finds this result.
      await forgetDeletedCitations(tx, analysisId, output.data);
      await stillRunning(tx, analysisId, { status: "running" });
      await storeInsights(tx, analysisId, row.entityId, output.data, output.entityOf);
      // Every source behind each insight, beside the result (content ids and spans, never their words).
      await storeThemeSources(tx, analysisId, output.themeSources);
      // Insights become generated knowledge records in the same transaction; their ids join the
      // result, which appendEvent serialises only after this callback.
      output.data.knowledge_record_ids = await publishGeneratedRecords(tx, analysisPublication(row, output.data));
      await tx.analysis.update({
        where: { id: analysisId },
        data: { status: output.status, result: result as unknown as Prisma.InputJsonObject, finishedAt: new Date(), error: null },
      });
    });
    return endedWith(
      { status: output.status },
      { kind: "analysis", id: analysisId, status: output.status, data: { entity_id: row.entityId } },
    );
  } catch (err) {
    if (err instanceof JobCancelled || cancel.signal.aborted) return { status: "cancelled" };
    // Retried, or ended when none follows: the worker runtime then calls failAnalysis.
    throw err;
  }
}

/**
 * An analysis whose last attempt failed: the stream's terminal `error` event and the row's `failed`, in one
 * transaction that refuses an analysis no longer running (a cancel that won keeps its own end); answers
 * the end it wrote, which the worker runtime announces. A caller's error (an AppError) is shown as it is; anything else as an internal error.
 */
export async function failAnalysis(deps: AppDeps, analysisId: string, err: Error): Promise<EndedJob | null> {
  const cause = (err as { cause?: unknown }).cause;
  const shown = err instanceof AppError ? err : cause instanceof AppError ? cause : null;
  const detail = shown ? shown.message : "The analysis failed on an internal error.";
  deps.logger.error({ err, analysisId }, "analysis failed");
  const row = await deps.db.analysis.findUnique({ where: { id: analysisId }, select: { entityId: true, status: true } });
  if (row?.status !== "running" && row?.status !== "queued") return null;
  const stored = await appendEvent(deps, analysisId, "error", { status: "failed", detail }, async (tx) => {
    await stillRunning(tx, analysisId, { status: "failed", error: detail, finishedAt: new Date() });
  }).catch((stopped: unknown) => {
    if (stopped instanceof JobCancelled) return undefined;
    throw stopped;
  });
  return stored ? { kind: "analysis", id: analysisId, status: "failed", data: { entity_id: row.entityId, error: detail } } : null;
}
