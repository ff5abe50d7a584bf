import type { Analysis } from "../generated/prisma/client.js";
import { type Db, isUniqueViolation } from "../platform/db.js";
import { AppError, notFound } from "../platform/errors.js";
import { isUuid, projectForUser, visibleWorkspaceIds, writableEntityForUser } from "../workspaces/access.js";
import { type AnalysisRecord, DEFAULT_SEARCH_MODE, type RunInput } from "./schemas.js";

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

export async function startAnalysis(db: Db, userId: string, input: RunInput): Promise<Started> {
  const providedSources = [...new Set((input.provided_sources ?? []).map((s) => s.content_id))];
  if (input.request_id) {
    const existing = await db.analysis.findUnique({ where: { userId_requestId: { userId, requestId: input.request_id } } });
    if (existing) return reuse(existing, input, providedSources);
  }

  // Every id the request names must be visible to the caller (404 otherwise, never 403).
  const entity = input.entity_id ? await writableEntityForUser(db, userId, input.entity_id, "start analyses") : null;
  const project = input.project_id ? await projectForUser(db, userId, input.project_id) : null;
  if (providedSources.length > 0) {
    const workspaces = await visibleWorkspaceIds(db, userId);
    const found = await db.content.findMany({
      where: { id: { in: providedSources }, workspaceId: { in: workspaces } },
      select: { id: true },
    });
    const visible = new Set(found.map((r) => r.id));
    const missing = providedSources.find((id) => !visible.has(id));
    if (missing) throw notFound(`Content ${missing}`);
  }

  try {
    const analysis = await db.analysis.create({
      data: {
        userId,
        workspaceId: entity?.workspaceId ?? project?.workspaceId ?? null,
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

/** The analysis if the caller owns it; otherwise 404. */
export async function analysisForUser(db: Db, userId: string, analysisId: string): Promise<Analysis> {
  const row = await db.analysis.findFirst({ where: { id: analysisId, userId } });
  if (!row) throw notFound("Analysis");
  return row;
}

/** The `request_id` of the analysis a collection job continues into (src/collection/analysis.ts). */
export const COLLECTION_JOB_REQUEST_PREFIX = "collection-job:";

/** Whether the analysis is the one a collection job of its owner started. */
async function startedByCollectionJob(db: Db, row: Analysis): Promise<boolean> {
  const jobId = row.requestId?.startsWith(COLLECTION_JOB_REQUEST_PREFIX) ? row.requestId.slice(COLLECTION_JOB_REQUEST_PREFIX.length) : "";
  if (!isUuid(jobId)) return false;
  const job = await db.collectionJob.findUnique({ where: { id: jobId }, select: { userId: true, analysisId: true } });
  return job !== null && job.userId === row.userId && job.analysisId === row.id;
}

/**
 * An analysis read (record or event stream). Anyone who may create a collection job may
 * follow the links it hands out, so a caller whose credential only ingests (an `ingest`
 * key) reads the analyses its collection jobs started; every other analysis needs a
 * bearer or a `*` key. Ownership is checked first: another user's analysis is a 404.
 */
export async function readableAnalysis(db: Db, caller: { userId: string; ingestOnly: boolean }, analysisId: string): Promise<Analysis> {
  const row = await analysisForUser(db, caller.userId, analysisId);
  if (caller.ingestOnly && !(await startedByCollectionJob(db, row))) {
    throw new AppError(
      "insufficient_scope",
      "An ingest key reads only the analyses its collection jobs started; this analysis needs a user bearer or a key with the '*' scope.",
    );
  }
  return row;
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
