import { isUuid, memberRole, requireRole } from "../../access/workspaces/access.js";
import { audit } from "../../access/workspaces/audit.js";
import type { DeletionRecord } from "../../generated/prisma/client.js";
import { jobIds } from "../../jobs/ids.js";
import type { Db } from "../../platform/db.js";
import type { AppDeps } from "../../platform/deps.js";
import { notFound } from "../../platform/errors.js";
import { cancelEntityJobs, totalCancelled } from "./entity-jobs.js";
import { findDeletion as findKindDeletion, openDeletion } from "./resumable.js";
import type { EntityDeletionRecord } from "./schemas.js";

/**
 * `DELETE /api/entities/{entity_id}` (admins): deleting a tracked entity with everything stored for it.
 * The request records the deletion (`deletion_records`, kind `entity`: from its commit on no original
 * of the entity can be stored, and its routines are paused), cancels every job still working on the entity
 * through its kind's cancel (entity-jobs.ts), and queues `entity.delete.v1`, which drains the originals in
 * batches and then removes the entity (entity-run.ts): 202 with the deletion and `Location`. Asking again
 * answers the same deletion (202 while it runs, resumed when it had failed; 204 once completed). Progress:
 * `GET /api/entities/{entity_id}/deletion` (every member of the workspace).
 */
export const deletionPath = (entityId: string) => `/api/entities/${entityId}/deletion`;

/** The entity's workspace, from the entity or, once it is gone, from its deletion; null when the caller is no member. */
async function locate(db: Db, userId: string, entityId: string): Promise<string | null> {
  if (!isUuid(entityId)) return null;
  const rows = await db.$queryRaw<{ workspace_id: string }[]>`
    SELECT workspace_id FROM entities WHERE id = ${entityId}::uuid
    UNION ALL
    SELECT workspace_id FROM deletion_records WHERE kind = 'entity' AND resource_id = ${entityId}::uuid
    LIMIT 1`;
  const workspaceId = rows[0]?.workspace_id;
  if (!workspaceId || (await memberRole(db, userId, workspaceId)) === null) return null;
  return workspaceId;
}

async function toRecord(db: Db, row: DeletionRecord): Promise<EntityDeletionRecord> {
  const remaining = row.status === "completed" ? 0 : await db.content.count({ where: { entityId: row.resourceId } });
  return {
    id: row.id,
    entity_id: row.resourceId,
    workspace_id: row.workspaceId ?? "",
    status: row.status as EntityDeletionRecord["status"],
    requested_by: row.requestedBy,
    progress: {
      jobs_cancelled: row.jobsCancelled,
      originals_matched: row.originalsMatched,
      remaining,
      rows_deleted: row.rowsDeleted,
      opinion_units_deleted: row.opinionUnitsDeleted,
      analyses_updated: row.analysesUpdated,
      knowledge_citations_cleared: row.knowledgeCitationsCleared,
      batches: row.batches,
    },
    removed: row.removed as EntityDeletionRecord["removed"],
    error: row.error,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
    finished_at: row.finishedAt?.toISOString() ?? null,
    next: deletionPath(row.resourceId),
  };
}

const findDeletion = (db: Db, entityId: string) => findKindDeletion(db, "entity", entityId);

/** Records the deletion, or finds it; answers its id. */
async function record(db: Db, userId: string, workspaceId: string, entityId: string): Promise<string | null> {
  return db.$transaction(
    async (tx) => {
      const locked = await tx.$queryRaw<{ id: string }[]>`SELECT id FROM entities WHERE id = ${entityId}::uuid FOR UPDATE`;
      if (locked.length === 0) return null;
      const [{ n } = { n: 0 }] = await tx.$queryRaw<{ n: number }[]>`
        SELECT count(*)::int AS n FROM content_store WHERE entity_id = ${entityId}::uuid`;
      const created = await tx.$queryRaw<{ id: string }[]>`
        INSERT INTO deletion_records (id, kind, resource_id, workspace_id, status, requested_by, originals_matched)
        VALUES (gen_random_uuid(), 'entity', ${entityId}::uuid, ${workspaceId}::uuid, 'running', ${userId}::uuid, ${n})
        ON CONFLICT (kind, resource_id) DO NOTHING RETURNING id`;
      const id = created[0]?.id;
      if (!id) return null;
      const paused = await tx.$executeRaw`
        UPDATE skill_routines SET enabled = false, updated_at = now() WHERE entity_id = ${entityId}::uuid AND enabled`;
      await audit(tx, workspaceId, userId, "entity.deletion_requested", entityId, {
        entity_id: entityId,
        deletion_id: id,
        originals_matched: n,
        routines_paused: paused,
      });
      return id;
    },
    { maxWait: 10_000, timeout: 60_000 },
  );
}

export async function requestEntityDeletion(deps: AppDeps, userId: string, entityId: string): Promise<EntityDeletionRecord | null> {
  const workspaceId = await locate(deps.db, userId, entityId);
  if (!workspaceId) throw notFound("Entity");
  await requireRole(deps.db, userId, workspaceId, "admin", "delete entities");

  const row = await openDeletion(deps.db, "entity", entityId, "Entity", () => record(deps.db, userId, workspaceId, entityId));
  if (!row) return null;
  const cancelled = totalCancelled(await cancelEntityJobs(deps, entityId));
  if (cancelled > 0) {
    await deps.db.$executeRaw`
      UPDATE deletion_records SET jobs_cancelled = jobs_cancelled + ${cancelled}, updated_at = clock_timestamp() WHERE id = ${row.id}::uuid`;
  }
  await deps.queues.enqueue("entity.delete.v1", { deletionId: row.id }, { jobId: jobIds.entityDeletion(row.id) });
  return toRecord(deps.db, await deps.db.deletionRecord.findUniqueOrThrow({ where: { id: row.id } }));
}

export async function readEntityDeletion(db: Db, userId: string, entityId: string): Promise<EntityDeletionRecord> {
  const workspaceId = await locate(db, userId, entityId);
  if (!workspaceId) throw notFound("Entity");
  const row = await findDeletion(db, entityId);
  if (!row) throw notFound("Deletion");
  return toRecord(db, row);
}
