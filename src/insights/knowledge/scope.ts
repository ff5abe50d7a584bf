import { entityForUser, memberRole, projectForUser } from "../../access/workspaces/access.js";
import type { Db, DbTx } from "../../platform/db.js";
import { AppError } from "../../platform/errors.js";
import { atLeast } from "../../platform/roles.js";

/**
 * The scope of a knowledge call: exactly one entity or one project the caller can see.
 * Every member of the scope's workspace reads; only members whose role may edit write
 * (a `viewer` reads only). Which sources a scope may cite: an entity's own originals, or
 * those of the entities in the project.
 */
export interface KnowledgeScope {
  kind: "entity" | "project";
  /** The entity or project id. */
  id: string;
  entityId: string | null;
  projectId: string | null;
  workspaceId: string;
  role: string;
}

export interface ScopeInput {
  entity_id?: string | undefined;
  project_id?: string | undefined;
}

/** Workspace roles that may write knowledge records. Any other role (`viewer`) reads only. */
export const mayEdit = (scope: Pick<KnowledgeScope, "role">) => atLeast(scope.role, "editor");

/** Neither entity_id nor project_id: the caller must name one. */
export function scopeRequired(): AppError {
  return new AppError("scope_required", "Name the scope of knowledge records with exactly one of entity_id or project_id.", {
    extra: { accepts: ["entity_id", "project_id"] },
  });
}

/** The zod refinement shared by bodies and queries: never both. */
export function refuseBothScopes(
  value: ScopeInput,
  ctx: { addIssue: (issue: { code: "custom"; path: string[]; message: string }) => void },
) {
  if (value.entity_id !== undefined && value.project_id !== undefined) {
    ctx.addIssue({ code: "custom", path: ["project_id"], message: "Give exactly one of entity_id or project_id, not both" });
  }
}

/**
 * The named scope if the caller is a member of its workspace; 404 otherwise; 400 when none is
 * named. (Naming both is refused by the request schemas, see `refuseBothScopes`.)
 */
export async function resolveScope(db: Db | DbTx, userId: string, input: ScopeInput): Promise<KnowledgeScope> {
  if (input.entity_id !== undefined) {
    const entity = await entityForUser(db, userId, input.entity_id);
    return {
      kind: "entity",
      id: entity.id,
      entityId: entity.id,
      projectId: null,
      workspaceId: entity.workspaceId,
      role: await roleIn(db, userId, entity.workspaceId),
    };
  }
  if (input.project_id !== undefined) {
    const project = await projectForUser(db, userId, input.project_id);
    return {
      kind: "project",
      id: project.id,
      entityId: null,
      projectId: project.id,
      workspaceId: project.workspaceId,
      role: await roleIn(db, userId, project.workspaceId),
    };
  }
  throw scopeRequired();
}

/** The scope, which the caller must be allowed to write in (403 for a viewer). */
export async function resolveWritableScope(db: Db | DbTx, userId: string, input: ScopeInput): Promise<KnowledgeScope> {
  const scope = await resolveScope(db, userId, input);
  if (!mayEdit(scope)) {
    throw new AppError("forbidden", `Your role in this workspace (${scope.role}) may read knowledge records but not write them.`);
  }
  return scope;
}

async function roleIn(db: Db | DbTx, userId: string, workspaceId: string): Promise<string> {
  return (await memberRole(db, userId, workspaceId)) ?? "viewer";
}

/** The entities whose originals the scope may cite (a project's: its entities now). */
export async function scopeEntityIds(db: Db | DbTx, scope: KnowledgeScope): Promise<string[]> {
  if (scope.entityId) return [scope.entityId];
  const rows = await db.entity.findMany({
    where: { projectId: scope.id, workspaceId: scope.workspaceId },
    select: { id: true },
    orderBy: { id: "asc" },
  });
  return rows.map((r) => r.id);
}
