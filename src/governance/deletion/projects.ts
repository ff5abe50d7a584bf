import { isUuid, memberRole, requireRole } from "../../access/workspaces/access.js";
import { audit } from "../../access/workspaces/audit.js";
import type { DeletionRecord } from "../../generated/prisma/client.js";
import { jobIds } from "../../jobs/ids.js";
import type { Db } from "../../platform/db.js";
import type { AppDeps } from "../../platform/deps.js";
import { notFound } from "../../platform/errors.js";
import { deletionPath as entityDeletionPath } from "./entities.js";
import { cancelEntityJobs, totalCancelled } from "./entity-jobs.js";
import { addJobsCancelled, cancelProjectAnalyses, linkEntities } from "./project-run.js";
import { findDeletion as findKindDeletion, openDeletion } from "./resumable.js";
import type { ProjectDeletionRecord } from "./schemas.js";

/**
 * `DELETE /api/projects/{project_id}` (admins): deleting a project with its entities and everything stored for
 * them. The request records the deletion (`deletion_records`, kind `project`) with one entity deletion per entity
 * of the project (kind `entity`, its parent the project's: from that commit on no original of them is stored, their
 * routines are paused, and nothing new can name the project), cancels every job still working on its entities and
 * its analyses, and queues `project.delete.v1` (project-run.ts): 202 with the deletion and `Location`. Asking again
 * answers the same deletion (202 while it runs, resumed when it had failed; 204 once completed). Progress:
 * `GET /api/projects/{project_id}/deletion` (every member of the workspace).
 */
export const projectDeletionPath = (projectId: string) => `/api/projects/${projectId}/deletion`;

/** The project's workspace, from the project or, once it is gone, from its deletion; null when the caller is no member. */
async function locate(db: Db, userId: string, projectId: string): Promise<string | null> {
  if (!isUuid(projectId)) return null;
  const rows = await db.$queryRaw<{ workspace_id: string }[]>`
    SELECT workspace_id FROM projects WHERE id = ${projectId}::uuid
    UNION ALL
    SELECT workspace_id FROM deletion_records WHERE kind = 'project' AND resource_id = ${projectId}::uuid
    LIMIT 1`;
  const workspaceId = rows[0]?.workspace_id;
  if (!workspaceId || (await memberRole(db, userId, workspaceId)) === null) return null;
  return workspaceId;
}

async function toRecord(db: Db, row: DeletionRecord): Promise<ProjectDeletionRecord> {
  const parts = await db.deletionRecord.findMany({ where: { parentId: row.id }, orderBy: [{ createdAt: "asc" }, { id: "asc" }] });
  const sum = (pick: (p: DeletionRecord) => number) => parts.reduce((n, p) => n + pick(p), 0);
  const open = parts.filter((p) => p.status !== "completed");
  const remaining =
    row.status === "completed" || open.length === 0
      ? 0
      : await db.content.count({ where: { entityId: { in: open.map((p) => p.resourceId) } } });
  return {
    id: row.id,
    project_id: row.resourceId,
    workspace_id: row.workspaceId ?? "",
    status: row.status as ProjectDeletionRecord["status"],
    requested_by: row.requestedBy,
    progress: {
      jobs_cancelled: row.jobsCancelled + sum((p) => p.jobsCancelled),
      entities_matched: parts.length,
      entities_remaining: open.length,
      originals_matched: row.originalsMatched,
      remaining,
      rows_deleted: sum((p) => p.rowsDeleted),
      opinion_units_deleted: sum((p) => p.opinionUnitsDeleted),
      analyses_updated: sum((p) => p.analysesUpdated),
      knowledge_citations_cleared: sum((p) => p.knowledgeCitationsCleared),
      batches: sum((p) => p.batches),
    },
    entities: parts.map((p) => ({
      entity_id: p.resourceId,
      deletion_id: p.id,
      status: p.status as ProjectDeletionRecord["status"],
      next: entityDeletionPath(p.resourceId),
    })),
    removed: row.removed as ProjectDeletionRecord["removed"],
    error: row.error,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
    finished_at: row.finishedAt?.toISOString() ?? null,
    next: projectDeletionPath(row.resourceId),
  };
}

const findDeletion = (db: Db, projectId: string) => findKindDeletion(db, "project", projectId);

/** Records the deletion with its entity deletions, or finds it. */
async function record(db: Db, userId: string, workspaceId: string, projectId: string): Promise<void> {
  await db.$transaction(
    async (tx) => {
      const locked = await tx.$queryRaw<{ id: string }[]>`SELECT id FROM projects WHERE id = ${projectId}::uuid FOR UPDATE`;
      if (locked.length === 0) return;
      const [{ n } = { n: 0 }] = await tx.$queryRaw<{ n: number }[]>`
        SELECT count(*)::int AS n FROM content_store
        WHERE entity_id IN (SELECT id FROM entities WHERE project_id = ${projectId}::uuid)`;
      const created = await tx.$queryRaw<{ id: string }[]>`
        INSERT INTO deletion_records (id, kind, resource_id, workspace_id, status, requested_by, originals_matched)
        VALUES (gen_random_uuid(), 'project', ${projectId}::uuid, ${workspaceId}::uuid, 'running', ${userId}::uuid, ${n})
        ON CONFLICT (kind, resource_id) DO NOTHING RETURNING id`;
      const id = created[0]?.id;
      if (!id) return;
      const { parts, routinesPaused } = await linkEntities(tx, { id, projectId, requestedBy: userId });
      await audit(tx, workspaceId, userId, "project.deletion_requested", projectId, {
        project_id: projectId,
        deletion_id: id,
        entity_ids: parts.map((p) => p.entityId),
        originals_matched: n,
        routines_paused: routinesPaused,
      });
    },
    { maxWait: 10_000, timeout: 60_000 },
  );
}

export async function requestProjectDeletion(deps: AppDeps, userId: string, projectId: string): Promise<ProjectDeletionRecord | null> {
  const workspaceId = await locate(deps.db, userId, projectId);
  if (!workspaceId) throw notFound("Project");
  await requireRole(deps.db, userId, workspaceId, "admin", "delete projects");

  const row = await openDeletion(deps.db, "project", projectId, "Project", () => record(deps.db, userId, workspaceId, projectId));
  if (!row) return null;
  // Every job still working on one of its entities, and the analyses that name the project.
  const parts = await deps.db.deletionRecord.findMany({
    where: { parentId: row.id, status: { not: "completed" } },
    select: { resourceId: true },
  });
  let cancelled = await cancelProjectAnalyses(deps, projectId);
  for (const part of parts) cancelled += totalCancelled(await cancelEntityJobs(deps, part.resourceId));
  await addJobsCancelled(deps, row.id, cancelled);
  await deps.queues.enqueue("project.delete.v1", { deletionId: row.id }, { jobId: jobIds.projectDeletion(row.id) });
  return toRecord(deps.db, await deps.db.deletionRecord.findUniqueOrThrow({ where: { id: row.id } }));
}

export async function readProjectDeletion(db: Db, userId: string, projectId: string): Promise<ProjectDeletionRecord> {
  const workspaceId = await locate(db, userId, projectId);
  if (!workspaceId) throw notFound("Project");
  const row = await findDeletion(db, projectId);
  if (!row) throw notFound("Deletion");
  return toRecord(db, row);
}
