import { isMember, isUuid, requireWriter } from "../../access/workspaces/access.js";
import type { Analysis } from "../../generated/prisma/client.js";
import { type Db, isUniqueViolation } from "../../platform/db.js";
import { AppError, notFound } from "../../platform/errors.js";
import { type AnalysisRecord, DEFAULT_SEARCH_MODE, type RunInput } from "./schemas.js";
import { analysisWorkspaceFor } from "./scope.js";

/**
 * Analysis requests and reads. Identity is the verified bearer's user only. A
 * `request_id` names one analysis per user: the same request again answers the same
 * analysis (its stream replays), a different request under the same id is a 409.
 */
export interface Started {
  analysis: Analysis;
  created: boolean;
}

function sameRequest(row: Analysis, input: RunInput, providedSources: string[]): boolean {
  return (
    row.question === input.question &&
    (row.searchMode ?? DEFAULT_SEARCH_MODE) === (input.search_mode ?? DEFAULT_SEARCH_MODE) &&
    row.depth === input.depth &&
    (row.entityId ?? undefined) === input.entity_id &&
    (row.projectId ?? undefined) === input.project_id &&
    JSON.stringify([...row.platforms].sort()) === JSON.stringify([...new Set(input.platforms ?? [])].sort()) &&
    JSON.stringify(row.providedSources) === JSON.stringify(providedSources)
  );
}

/**
 * `forRun`: the analysis is a step of a workflow run, authorised when the run started, so it goes on
 * for a starter who has since left the workspace or lost the editor role (their running work finishes).
 */
export async function startAnalysis(
  db: Db,
  userId: string,
  input: RunInput,
  { forRun = false }: { forRun?: boolean } = {},
): Promise<Started> {
  const providedSources = [...new Set((input.provided_sources ?? []).map((s) => s.content_id))];
  if (input.request_id) {
    const existing = await db.analysis.findUnique({ where: { userId_requestId: { userId, requestId: input.request_id } } });
    if (existing) return reuse(existing, input, providedSources);
  }

  // The workspace the analysis reads and belongs to: every id the request names must be visible to the
  // caller (404 otherwise), who must be an editor there (403), however the scope is named (scope.ts).
  // A workflow run's step names its entity, and was authorised when the run started.
  const workspaceId =
    forRun && input.entity_id
      ? (await db.entity.findUniqueOrThrow({ where: { id: input.entity_id } })).workspaceId
      : await analysisWorkspaceFor(db, userId, {
          entityId: input.entity_id ?? null,
          projectId: input.project_id ?? null,
          providedSources,
        });

  try {
    const analysis = await db.analysis.create({
      data: {
        userId,
        workspaceId,
        entityId: input.entity_id ?? null,
        projectId: input.project_id ?? null,
        requestId: input.request_id ?? null,
        question: input.question,
        // The mode the analysis runs with, also when the request named none.
        searchMode: input.search_mode ?? DEFAULT_SEARCH_MODE,
        platforms: [...new Set(input.platforms ?? [])],
        depth: input.depth,
        providedSources,
        status: "queued",
      },
    });
    return { analysis, created: true };
  } catch (err) {
    if (!isUniqueViolation(err) || !input.request_id) throw err;
    // Another request with the same request_id won the race.
    const existing = await db.analysis.findUnique({ where: { userId_requestId: { userId, requestId: input.request_id } } });
    if (!existing) throw err;
    return reuse(existing, input, providedSources);
  }
}

function reuse(existing: Analysis, input: RunInput, providedSources: string[]): Started {
  if (!sameRequest(existing, input, providedSources)) {
    throw new AppError("idempotency_conflict", "This request_id was already used for a different analysis request.", {
      extra: { analysis_id: existing.id },
    });
  }
  return { analysis: existing, created: false };
}

/** The workspace an analysis belongs to: its own, else its entity's or project's; null for one that names neither. */
export async function analysisWorkspace(db: Db, row: Analysis): Promise<string | null> {
  if (row.workspaceId) return row.workspaceId;
  const owner = row.entityId
    ? await db.entity.findUnique({ where: { id: row.entityId }, select: { workspaceId: true } })
    : row.projectId
      ? await db.project.findUnique({ where: { id: row.projectId }, select: { workspaceId: true } })
      : null;
  return owner?.workspaceId ?? null;
}

/**
 * The analysis if the caller is a member of its workspace, whoever started it (an analysis of no
 * workspace, naming neither entity nor project, only for the user who started it); otherwise 404.
 */
export async function analysisForUser(db: Db, userId: string, analysisId: string): Promise<{ row: Analysis; workspaceId: string | null }> {
  const row = isUuid(analysisId) ? await db.analysis.findUnique({ where: { id: analysisId } }) : null;
  if (!row) throw notFound("Analysis");
  const workspaceId = await analysisWorkspace(db, row);
  const visible = workspaceId ? await isMember(db, userId, workspaceId) : row.userId === userId;
  if (!visible) throw notFound("Analysis");
  return { row, workspaceId };
}

/** The `request_id` of the analysis a collection job continues into (src/intake/collection/analysis.ts). */
export const COLLECTION_JOB_REQUEST_PREFIX = "collection-job:";

/** Whether the analysis is the one a collection job of its owner started. */
async function startedByCollectionJob(db: Db, row: Analysis): Promise<boolean> {
  const jobId = row.requestId?.startsWith(COLLECTION_JOB_REQUEST_PREFIX) ? row.requestId.slice(COLLECTION_JOB_REQUEST_PREFIX.length) : "";
  if (!isUuid(jobId)) return false;
  const job = await db.collectionJob.findUnique({ where: { id: jobId }, select: { userId: true, analysisId: true } });
  return job !== null && job.userId === row.userId && job.analysisId === row.id;
}

/** Who reads or cancels an analysis: the user, and whether its credential only ingests (an `ingest` key). */
export interface AnalysisCaller {
  userId: string;
  ingestOnly: boolean;
}

/**
 * An analysis read (record or event stream). Anyone who may create a collection job may
 * follow the links it hands out, so a caller whose credential only ingests reads the
 * analyses collection jobs started; every other analysis needs a bearer or a `*` key.
 * Membership is checked first: an analysis outside the caller's workspaces is a 404.
 */
export async function readableAnalysis(db: Db, caller: AnalysisCaller, analysisId: string): Promise<Analysis> {
  return (await readableWithWorkspace(db, caller, analysisId)).row;
}

/**
 * An analysis the caller may cancel: one it may read, in a workspace where it is an editor or above,
 * whoever started it (403 `forbidden` for a viewer, before anything changes). An analysis of no
 * workspace is cancelled by the user who started it.
 */
export async function cancellableAnalysis(db: Db, caller: AnalysisCaller, analysisId: string): Promise<Analysis> {
  const { row, workspaceId } = await readableWithWorkspace(db, caller, analysisId);
  if (workspaceId) await requireWriter(db, caller.userId, workspaceId, "cancel analyses");
  return row;
}

async function readableWithWorkspace(db: Db, caller: AnalysisCaller, analysisId: string) {
  const found = await analysisForUser(db, caller.userId, analysisId);
  if (caller.ingestOnly && !(await startedByCollectionJob(db, found.row))) {
    throw new AppError(
      "insufficient_scope",
      "An ingest key reads only the analyses its collection jobs started; this analysis needs a user bearer or a key with the '*' scope.",
    );
  }
  return found;
}

export function toAnalysisRecord(row: Analysis): AnalysisRecord {
  return {
    analysis_id: row.id,
    status: row.status as AnalysisRecord["status"],
    question: row.question,
    // Rows written before the default was stored hold null: they ran with the default.
    search_mode: row.searchMode ?? DEFAULT_SEARCH_MODE,
    platforms: row.platforms,
    depth: row.depth,
    entity_id: row.entityId,
    project_id: row.projectId,
    request_id: row.requestId,
    provided_sources: row.providedSources.map((content_id) => ({ content_id })),
    result: (row.result as AnalysisRecord["result"]) ?? null,
    error: row.error,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
    finished_at: row.finishedAt ? row.finishedAt.toISOString() : null,
    events_url: `/agent/v1/analysis/${row.id}/events`,
  };
}
