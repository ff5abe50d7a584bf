import { isUuid } from "../../access/workspaces/access.js";
import { audit } from "../../access/workspaces/audit.js";
import { cancelAnalysis } from "../../insights/analysis/jobs.js";
import { cancelJobRow } from "../../intake/collection/cancel.js";
import { cancelSyncRow } from "../../intake/notes/service.js";
import { cancelSweepRow } from "../../intake/sweeps/run.js";
import { endJob, removeQueuedEntry } from "../../jobs/lifecycle.js";
import type { AppDeps } from "../../platform/deps.js";
import { AppError, notFound } from "../../platform/errors.js";
import { atLeast, type Role } from "../../platform/roles.js";
import { settle } from "../../workflows/runs/execute.js";
import { runJobId } from "../../workflows/runs/service.js";
import type { WorkspaceState } from "./schemas.js";

/**
 * Deleting a workspace (its owner) and restoring it during the grace period. `DELETE` turns the
 * workspace `deleting` with `purge_after` = now + WORKSPACE_DELETE_GRACE_HOURS, in one transaction
 * with its routines paused, the deletion record (`workspace_deletions`) and the audit entry. From that
 * commit every membership check (src/access/workspaces/access.ts reads `state` with the membership) answers
 * 404 for it, so neither members nor their keys act in it, its share links open nothing and its webhooks
 * send nothing; then its live jobs are cancelled. Its owners still see it in `GET /api/workspaces` and
 * may restore it until `purge_after`; after that the scheduled pass purges it (purge.ts).
 */
type Deps = AppDeps;

interface WorkspaceRow {
  id: string;
  name: string;
  personal: boolean;
  created_at: Date;
  state: string;
  retention_days: number | null;
  deletion_requested_at: Date | null;
  deletion_requested_by: string | null;
  purge_after: Date | null;
  role: string | null;
}

/** The workspace with the caller's role, whatever its state (null: no such workspace or not a member). */
async function readWorkspace(db: Deps["db"], userId: string, workspaceId: string): Promise<WorkspaceRow | null> {
  if (!isUuid(workspaceId)) return null;
  const rows = await db.$queryRaw<WorkspaceRow[]>`
    SELECT w.id, w.name, w.personal, w.created_at, w.state, w.retention_days, w.deletion_requested_at,
      w.deletion_requested_by, w.purge_after, m.role
    FROM workspaces w JOIN workspace_members m ON m.workspace_id = w.id AND m.user_id = ${userId}::uuid
    WHERE w.id = ${workspaceId}::uuid`;
  return rows[0] ?? null;
}

export function toWorkspaceState(row: Omit<WorkspaceRow, "role">, role: string): WorkspaceState {
  return {
    id: row.id,
    name: row.name,
    personal: row.personal,
    role: role as Role,
    created_at: row.created_at.toISOString(),
    state: row.state as WorkspaceState["state"],
    retention_days: row.retention_days,
    deletion:
      row.state === "deleting" && row.purge_after
        ? {
            requested_at: row.deletion_requested_at?.toISOString() ?? null,
            requested_by: row.deletion_requested_by,
            purge_after: row.purge_after.toISOString(),
          }
        : null,
  };
}

/**
 * The workspace for a change only its owner may make, in any state: 404 for a non-member (and for a
 * member who is not an owner while it is being deleted: it is invisible to them), 403 for a member
 * below owner of an active workspace.
 */
async function ownersWorkspace(
  db: Deps["db"],
  userId: string,
  workspaceId: string,
  what: string,
): Promise<WorkspaceRow & { role: string }> {
  const row = await readWorkspace(db, userId, workspaceId);
  if (!row?.role) throw notFound("Workspace");
  if (!atLeast(row.role, "owner")) {
    if (row.state !== "active") throw notFound("Workspace");
    throw new AppError("forbidden", `Your role in this workspace (${row.role}) may not ${what}; that takes owner.`);
  }
  return row as WorkspaceRow & { role: string };
}

/** `DELETE /api/workspaces/{workspace_id}`: idempotent; a workspace already being deleted answers as it is. */
export async function deleteWorkspace(deps: Deps, userId: string, workspaceId: string): Promise<WorkspaceState> {
  const found = await ownersWorkspace(deps.db, userId, workspaceId, "delete the workspace");
  if (found.personal)
    throw new AppError("conflict", "A personal workspace cannot be deleted; it is recreated on the next request that needs it.");
  const graceMs = Math.round(deps.config.WORKSPACE_DELETE_GRACE_HOURS * 3_600_000);
  const started = await deps.db.$transaction(async (tx) => {
    const [row] = await tx.$queryRaw<{ state: string }[]>`SELECT state FROM workspaces WHERE id = ${workspaceId}::uuid FOR UPDATE`;
    if (row?.state !== "active") return false;
    const [changed] = await tx.$queryRaw<{ purge_after: Date }[]>`
      UPDATE workspaces SET state = 'deleting', deletion_requested_at = now(), deletion_requested_by = ${userId}::uuid,
        purge_after = now() + make_interval(secs => ${graceMs / 1000}::float8)
      WHERE id = ${workspaceId}::uuid RETURNING purge_after`;
    const purgeAfter = changed?.purge_after ?? new Date();
    // Paused for good: a restore leaves them paused until an admin enables them again.
    const paused = await tx.$executeRaw`
      UPDATE skill_routines SET enabled = false, updated_at = now() WHERE workspace_id = ${workspaceId}::uuid AND enabled`;
    await tx.$executeRaw`
      INSERT INTO workspace_deletions (id, workspace_id, status, requested_by, purge_after)
      VALUES (gen_random_uuid(), ${workspaceId}::uuid, 'pending', ${userId}::uuid, ${purgeAfter})`;
    await audit(tx, workspaceId, userId, "workspace.deletion_requested", workspaceId, {
      purge_after: purgeAfter.toISOString(),
      routines_paused: paused,
    });
    return true;
  });
  if (started) {
    const cancelled = await cancelWorkspaceJobs(deps, workspaceId);
    await deps.db.$executeRaw`
      UPDATE workspace_deletions SET jobs_cancelled = jobs_cancelled + ${cancelled}
      WHERE workspace_id = ${workspaceId}::uuid AND status = 'pending'`;
  }
  return stateFor(deps, userId, workspaceId);
}

/** `POST /api/workspaces/{workspace_id}/restore`: back to active before `purge_after`; an active workspace answers as it is. */
export async function restoreWorkspace(deps: Deps, userId: string, workspaceId: string): Promise<WorkspaceState> {
  const found = await ownersWorkspace(deps.db, userId, workspaceId, "restore the workspace");
  if (found.state === "active") return toWorkspaceState(found, found.role);
  await deps.db.$transaction(async (tx) => {
    const [row] = await tx.$queryRaw<{ state: string; due: boolean }[]>`
      SELECT state, purge_after <= now() AS due FROM workspaces WHERE id = ${workspaceId}::uuid FOR UPDATE`;
    if (row?.state !== "deleting") return;
    if (row.due) throw new AppError("conflict", "The grace period has ended: the workspace is being purged and can no longer be restored.");
    await tx.$executeRaw`
      UPDATE workspaces SET state = 'active', deletion_requested_at = NULL, deletion_requested_by = NULL, purge_after = NULL
      WHERE id = ${workspaceId}::uuid`;
    await tx.$executeRaw`
      UPDATE workspace_deletions SET status = 'restored', restored_by = ${userId}::uuid, restored_at = now()
      WHERE workspace_id = ${workspaceId}::uuid AND status = 'pending'`;
    await audit(tx, workspaceId, userId, "workspace.restored", workspaceId, { routines: "paused until an admin enables them again" });
  });
  return stateFor(deps, userId, workspaceId);
}

async function stateFor(deps: Deps, userId: string, workspaceId: string): Promise<WorkspaceState> {
  const row = await readWorkspace(deps.db, userId, workspaceId);
  if (!row?.role) throw notFound("Workspace");
  return toWorkspaceState(row, row.role);
}

const DETAIL = "cancelled: its workspace is being deleted";

/**
 * Cancels every live job of the workspace, kind by kind, with each kind's own cancel transition (the
 * row's guarded UPDATE, its queue entry, its end event). Answers how many it cancelled; a job that
 * ended meanwhile is skipped. Run when the deletion is requested and again before the purge.
 */
export async function cancelWorkspaceJobs(deps: Deps, workspaceId: string): Promise<number> {
  let cancelled = 0;
  const runs = await deps.db.workflowRun.findMany({
    where: { workspaceId, status: { in: ["queued", "running"] } },
    select: { id: true },
  });
  for (const run of runs) {
    if (await endJob(deps, () => settle(deps, run.id, { status: "cancelled", usage: { platforms: 0, sources: 0 } }))) {
      await removeQueuedEntry(deps.queues.get("workflow-run"), runJobId(run.id));
      cancelled++;
    }
  }
  const entityIds = (await deps.db.entity.findMany({ where: { workspaceId }, select: { id: true } })).map((e) => e.id);
  const entities = { entityId: { in: entityIds } };
  const jobs = await deps.db.collectionJob.findMany({ where: { ...entities, status: { in: ["queued", "running"] } } });
  for (const job of jobs) if ((await cancelJobRow(deps, job, DETAIL)).changed) cancelled++;

  const analyses = await deps.db.$queryRaw<{ id: string }[]>`
    SELECT a.id FROM analyses a LEFT JOIN entities e ON e.id = a.entity_id
    WHERE (a.workspace_id = ${workspaceId}::uuid OR e.workspace_id = ${workspaceId}::uuid) AND a.status IN ('queued', 'running')`;
  for (const { id } of analyses) {
    try {
      await cancelAnalysis(deps, id);
      cancelled++;
    } catch (err) {
      // Ended meanwhile (409): nothing to cancel.
      if (!(err instanceof AppError)) throw err;
    }
  }

  const syncs = await deps.db.noteSync.findMany({ where: { ...entities, status: { in: ["queued", "running"] } } });
  for (const sync of syncs) {
    const outcome = await cancelSyncRow(deps, sync, DETAIL);
    if (outcome.changed) cancelled++;
  }
  const sweeps = await deps.db.sweepRun.findMany({ where: { ...entities, status: { in: ["queued", "running"] } } });
  for (const sweep of sweeps) {
    const outcome = await cancelSweepRow(deps, sweep, DETAIL);
    if (outcome.changed) cancelled++;
  }
  return cancelled;
}
