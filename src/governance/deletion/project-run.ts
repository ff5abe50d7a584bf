import { audit } from "../../access/workspaces/audit.js";
import { cancelAnalysis } from "../../insights/analysis/jobs.js";
import type { DbTx } from "../../platform/db.js";
import type { AppDeps } from "../../platform/deps.js";
import { AppError } from "../../platform/errors.js";
import { retryingTransaction } from "./cascade.js";
import { runEntityDeletion } from "./entity-run.js";

/**
 * Draining a project's deletion (`project.delete.v1`, or the request's own caller in tests). Each entity of the
 * project is deleted by an entity deletion of its own (`deletion_records` kind `entity`, `parent_id` the project's
 * deletion), run here through entity-run.ts exactly as `entity.delete.v1` runs it: originals in batches, then the
 * entity with everything scoped to it. When every part has completed, one last transaction removes what names the
 * project itself (`finish`): its analyses, its knowledge records, share links to them, the onboarding replay that
 * made it and the project row; skills and users' saved pages that named it are detached. Every step is resumable:
 * a stopped run starts again from the deletion rows.
 */
/** Rounds of "delete the entities, then finish" before giving up (an entity that joined meanwhile adds a round). */
const MAX_ROUNDS = 3;

interface ProjectDeletionRow {
  id: string;
  resource_id: string;
  workspace_id: string;
  status: string;
  requested_by: string | null;
}

/**
 * Makes every entity of the project part of its deletion: an entity deletion is recorded for each entity that has
 * none (from its commit on no original of it is stored; its routines are paused), an entity's own deletion asked for
 * earlier joins, and a failed part is resumed. Answers the parts not completed yet, oldest first.
 */
export async function linkEntities(
  tx: DbTx,
  row: { id: string; projectId: string; requestedBy: string | null },
): Promise<{ parts: { id: string; entityId: string }[]; routinesPaused: number }> {
  const created = await tx.$queryRaw<{ id: string; entity_id: string; workspace_id: string; originals_matched: number }[]>`
    INSERT INTO deletion_records (id, kind, resource_id, workspace_id, status, requested_by, originals_matched, parent_id)
    SELECT gen_random_uuid(), 'entity', e.id, e.workspace_id, 'running', ${row.requestedBy}::uuid,
      (SELECT count(*)::int FROM content_store c WHERE c.entity_id = e.id), ${row.id}::uuid
    FROM entities e WHERE e.project_id = ${row.projectId}::uuid ORDER BY e.created_at, e.id
    ON CONFLICT (kind, resource_id) DO NOTHING
    RETURNING id, resource_id AS entity_id, workspace_id, originals_matched`;
  let routinesPaused = 0;
  for (const part of created) {
    const paused = await tx.$executeRaw`
      UPDATE skill_routines SET enabled = false, updated_at = now() WHERE entity_id = ${part.entity_id}::uuid AND enabled`;
    routinesPaused += paused;
    await audit(tx, part.workspace_id, row.requestedBy, "entity.deletion_requested", part.entity_id, {
      entity_id: part.entity_id,
      deletion_id: part.id,
      project_deletion_id: row.id,
      originals_matched: part.originals_matched,
      routines_paused: paused,
    });
  }
  await tx.$executeRaw`
    UPDATE deletion_records SET parent_id = ${row.id}::uuid, updated_at = clock_timestamp()
    WHERE kind = 'entity' AND parent_id IS NULL AND status <> 'completed'
      AND resource_id IN (SELECT id FROM entities WHERE project_id = ${row.projectId}::uuid)`;
  await tx.$executeRaw`
    UPDATE deletion_records SET status = 'running', error = NULL, updated_at = clock_timestamp()
    WHERE parent_id = ${row.id}::uuid AND status = 'failed'`;
  const parts = await tx.$queryRaw<{ id: string; entityId: string }[]>`
    SELECT id, resource_id AS "entityId" FROM deletion_records
    WHERE parent_id = ${row.id}::uuid AND status <> 'completed' ORDER BY created_at, id`;
  return { parts, routinesPaused };
}

/** Cancels the live analyses that name the project (an entity's jobs are its entity deletion's to cancel). */
export async function cancelProjectAnalyses(deps: AppDeps, projectId: string): Promise<number> {
  const live = await deps.db.analysis.findMany({ where: { projectId, status: { in: ["queued", "running"] } }, select: { id: true } });
  let cancelled = 0;
  for (const { id } of live) {
    try {
      await cancelAnalysis(deps, id);
      cancelled++;
    } catch (err) {
      // Ended meanwhile (409) or gone (404): nothing left to cancel.
      if (!(err instanceof AppError)) throw err;
    }
  }
  return cancelled;
}

export async function addJobsCancelled(deps: Pick<AppDeps, "db">, deletionId: string, cancelled: number): Promise<void> {
  if (cancelled === 0) return;
  await deps.db.$executeRaw`
    UPDATE deletion_records SET jobs_cancelled = jobs_cancelled + ${cancelled}, updated_at = clock_timestamp() WHERE id = ${deletionId}::uuid`;
}

/**
 * Runs the deletion to its end, or, when `maxBatches` is given, at most that many batches of originals of each
 * entity (a run that stops there answers false and the next run continues). Answers whether it completed.
 */
export async function runProjectDeletion(deps: AppDeps, deletionId: string, options: { maxBatches?: number } = {}): Promise<boolean> {
  for (let round = 1; ; round++) {
    const row = await deps.db.deletionRecord.findUnique({ where: { id: deletionId } });
    if (row?.kind !== "project" || row.status !== "running") return row?.status === "completed";
    const { parts } = await retryingTransaction(deps.db, (tx) =>
      linkEntities(tx, { id: row.id, projectId: row.resourceId, requestedBy: row.requestedBy }),
    );
    for (const part of parts) {
      if (await runEntityDeletion(deps, part.id, options)) continue;
      if (options.maxBatches !== undefined) return false;
      const after = await deps.db.deletionRecord.findUnique({ where: { id: part.id }, select: { status: true } });
      if (after?.status !== "completed") {
        throw new Error(
          `The deletion of entity ${part.entityId} is ${after?.status ?? "gone"}; running the project's deletion again resumes it.`,
        );
      }
    }
    // Analyses started on the project while its entities were deleted.
    await addJobsCancelled(deps, deletionId, await cancelProjectAnalyses(deps, row.resourceId));
    const outcome = await retryingTransaction(deps.db, (tx) => finish(tx, deletionId));
    if (outcome !== "more") return outcome === "completed";
    if (round >= MAX_ROUNDS) throw new Error("Entities kept joining the project while it was being deleted; the next attempt continues.");
  }
}

/**
 * The last step, one transaction. The project row is locked first, so a knowledge record being written into the
 * project (its foreign key key-share locks the row) either committed before (and goes here) or fails after; entities,
 * analyses, records and pages that would name the project anew are refused by the tables' triggers since the
 * request. An entity that still names it (it joined just before the request committed) sends the run round again.
 */
async function finish(tx: DbTx, deletionId: string): Promise<"completed" | "more" | "idle"> {
  const [row] = await tx.$queryRaw<ProjectDeletionRow[]>`
    SELECT id, resource_id, workspace_id, status, requested_by FROM deletion_records
    WHERE id = ${deletionId}::uuid AND kind = 'project' FOR UPDATE`;
  if (row?.status !== "running") return "idle";
  const projectId = row.resource_id;
  await tx.$queryRaw`SELECT id FROM projects WHERE id = ${projectId}::uuid FOR UPDATE`;
  const [{ left } = { left: 0 }] = await tx.$queryRaw<{ left: number }[]>`
    SELECT (SELECT count(*) FROM entities WHERE project_id = ${projectId}::uuid)::int
      + (SELECT count(*) FROM deletion_records WHERE parent_id = ${deletionId}::uuid AND status <> 'completed')::int AS left`;
  if (left > 0) return "more";

  const removed = await removeProject(tx, row.workspace_id, projectId);
  const [parts] = await tx.$queryRaw<Record<string, number>[]>`
    SELECT count(*)::int AS entities, COALESCE(sum(rows_deleted), 0)::int AS rows_deleted,
      COALESCE(sum(opinion_units_deleted), 0)::int AS opinion_units_deleted, COALESCE(sum(analyses_updated), 0)::int AS analyses_updated,
      COALESCE(sum(knowledge_citations_cleared), 0)::int AS knowledge_citations_cleared, COALESCE(sum(batches), 0)::int AS batches,
      COALESCE(sum(jobs_cancelled), 0)::int AS entity_jobs_cancelled
    FROM deletion_records WHERE parent_id = ${deletionId}::uuid`;
  const entityIds = (
    await tx.$queryRaw<{ id: string }[]>`
      SELECT resource_id AS id FROM deletion_records WHERE parent_id = ${deletionId}::uuid ORDER BY created_at, id`
  ).map((r) => r.id);
  const [own] = await tx.$queryRaw<{ originals_matched: number; jobs_cancelled: number }[]>`
    UPDATE deletion_records SET status = 'completed', error = NULL, removed = ${JSON.stringify({ entities: entityIds.length, ...removed })}::jsonb,
      finished_at = clock_timestamp(), updated_at = clock_timestamp()
    WHERE id = ${deletionId}::uuid RETURNING originals_matched, jobs_cancelled`;
  const { entity_jobs_cancelled: entityJobs = 0, ...totals } = parts ?? {};
  await audit(tx, row.workspace_id, row.requested_by, "project.deleted", projectId, {
    project_id: projectId,
    deletion_id: deletionId,
    entity_ids: entityIds,
    ...totals,
    originals_matched: own?.originals_matched ?? 0,
    jobs_cancelled: (own?.jobs_cancelled ?? 0) + entityJobs,
    removed,
  });
  return "completed";
}

/** What names the project, then the project: counts by kind (its entities are already gone). */
async function removeProject(tx: DbTx, workspaceId: string, projectId: string): Promise<Record<string, number>> {
  const analyses = (await tx.$queryRaw<{ id: string }[]>`SELECT id FROM analyses WHERE project_id = ${projectId}::uuid`).map((r) => r.id);
  const records = (await tx.$queryRaw<{ id: string }[]>`SELECT id FROM knowledge_insights WHERE project_id = ${projectId}::uuid`).map(
    (r) => r.id,
  );
  const shareLinks = await tx.$executeRaw`
    DELETE FROM share_links WHERE workspace_id = ${workspaceId}::uuid AND (
      (resource_kind = 'analysis' AND resource_id = ANY(${analyses}::uuid[]))
      OR (resource_kind = 'knowledge_record' AND resource_id = ANY(${records}::uuid[])))`;
  // The project's analyses with their events and the sources behind their insights (foreign keys), insights and
  // insight evidence (foreign key).
  await tx.$executeRaw`DELETE FROM entity_insights WHERE analysis_id = ANY(${analyses}::uuid[])`;
  const analysesDeleted = await tx.$executeRaw`DELETE FROM analyses WHERE id = ANY(${analyses}::uuid[])`;
  // Records scoped to the project, with their revisions, citations, receipts and the actions derived from them.
  const knowledgeRecords = await tx.$executeRaw`DELETE FROM knowledge_insights WHERE id = ANY(${records}::uuid[])`;
  // Snapshots of the deleted entities' originals (their text already cleared) that only those records cited.
  const snapshots = await tx.$executeRaw`
    DELETE FROM knowledge_source_revisions s WHERE s.workspace_id = ${workspaceId}::uuid
      AND NOT EXISTS (SELECT 1 FROM entities e WHERE e.id = s.entity_id)
      AND NOT EXISTS (SELECT 1 FROM knowledge_revision_evidence v WHERE v.source_revision_id = s.id)`;
  // Skills of entities outside the project that still named it, and users' saved pages: theirs, detached.
  const skills = await tx.$executeRaw`UPDATE skills SET project_id = NULL, updated_at = now() WHERE project_id = ${projectId}::uuid`;
  const pages = await tx.$executeRaw`UPDATE pages SET project_id = NULL WHERE project_id = ${projectId}::uuid`;
  // The replay of the onboarding that made the project: it names the project, its entities and objectives.
  const onboarding = await tx.$executeRaw`DELETE FROM onboarding_requests WHERE response->>'project_id' = ${projectId}`;
  // The project's change feed and counter go by trigger with the row.
  await tx.$executeRaw`DELETE FROM projects WHERE id = ${projectId}::uuid`;
  return {
    analyses: analysesDeleted,
    knowledge_records: knowledgeRecords,
    knowledge_snapshots: snapshots,
    share_links: shareLinks,
    onboarding_requests: onboarding,
    skills_detached: skills,
    pages_detached: pages,
  };
}
