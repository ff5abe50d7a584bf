import type { AuthContext } from "../../platform/auth.js";
import type { Db } from "../../platform/db.js";
import { activeWorkspaceOf, entityForUser, projectForUser } from "../workspaces/access.js";

/**
 * The connection answer agents read first: who the caller is, which scope it acts in and with which key
 * scopes. Without a scope, a caller who can see several entities is asked for one (`scope_required`), never
 * for a broader key permission.
 */
export const CONTRACT_VERSION = 1;

export async function describeConnection(db: Db, auth: AuthContext, scope: { entity_id?: string; project_id?: string }) {
  const base = {
    contract_version: CONTRACT_VERSION,
    user_id: auth.user.id,
    credential: auth.via,
    scopes: auth.key ? auth.key.scopes : ["*"],
    raw_export_enabled: auth.user.rawExportEnabled || auth.user.isInternalAgent,
  };
  if (scope.entity_id) {
    const entity = await entityForUser(db, auth.user.id, scope.entity_id);
    return { ...base, status: "connected", entity_id: entity.id, project_id: entity.projectId, workspace_id: entity.workspaceId };
  }
  if (scope.project_id) {
    const project = await projectForUser(db, auth.user.id, scope.project_id);
    return { ...base, status: "connected", project_id: project.id, workspace_id: project.workspaceId };
  }
  const visible = await db.entity.findMany({
    where: { workspace: activeWorkspaceOf(auth.user.id) },
    select: { id: true, projectId: true, workspaceId: true },
    take: 2,
    orderBy: { createdAt: "asc" },
  });
  if (visible.length > 1) {
    return {
      ...base,
      status: "scope_required",
      detail: "Several entities are visible to this credential: name one with entity_id or project_id.",
      accepts: ["entity_id", "project_id"],
    };
  }
  const only = visible[0];
  return {
    ...base,
    status: "connected",
    entity_id: only?.id ?? null,
    project_id: only?.projectId ?? null,
    workspace_id: only?.workspaceId ?? null,
  };
}
