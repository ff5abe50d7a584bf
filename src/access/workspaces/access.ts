import { type Db, type DbTx, Prisma } from "../../platform/db.js";
import { AppError, notFound } from "../../platform/errors.js";
import { atLeast, ROLES, type Role } from "../../platform/roles.js";

/**
 * Tenancy: workspaces have members; entities and projects belong to a workspace. A
 * resource the caller may not see is reported as not found, so ids never leak. A workspace
 * its owner deleted (`state` deleting, src/governance/deletion/workspaces.ts) is seen by no one: every
 * check here reads the workspace's state in the statement that reads the membership.
 */
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const isUuid = (value: string) => UUID_RE.test(value);

/**
 * A workspace anyone may act in: not being deleted. The one definition of the rule, as a Prisma
 * `where` on a workspace (`activeMembershipsOf` says the same in SQL).
 */
export const ACTIVE_WORKSPACE = { state: "active" } as const satisfies Prisma.WorkspaceWhereInput;

/** Prisma `where` on a workspace relation: an active workspace the user is a member of (`{ workspace: activeWorkspaceOf(userId) }`). */
export const activeWorkspaceOf = (userId: string) =>
  ({ ...ACTIVE_WORKSPACE, members: { some: { userId } } }) satisfies Prisma.WorkspaceWhereInput;

/**
 * SQL: the user's memberships of active workspaces (with at least role `least`), a row source of
 * `(workspace_id, role)` to join or probe with an alias, e.g.
 * `JOIN ${activeMembershipsOf(userId)} m ON m.workspace_id = x.workspace_id`. A plain subquery,
 * which PostgreSQL flattens into the outer statement: the plan is the one of writing the joins out.
 * `user` is a user id, or an SQL expression of one (a column of the outer statement's rows).
 */
export function activeMembershipsOf(user: string | Prisma.Sql, least?: Role): Prisma.Sql {
  const role = least ? Prisma.sql`AND m.role IN (${Prisma.join(ROLES.filter((r) => atLeast(r, least)))})` : Prisma.empty;
  const who = typeof user === "string" ? Prisma.sql`${user}::uuid` : user;
  return Prisma.sql`(SELECT m.workspace_id, m.role FROM workspace_members m
    JOIN workspaces w ON w.id = m.workspace_id AND w.state = 'active'
    WHERE m.user_id = ${who} ${role})`;
}

export async function visibleWorkspaceIds(db: Db | DbTx, userId: string): Promise<string[]> {
  const rows = await db.workspaceMember.findMany({ where: { userId, workspace: ACTIVE_WORKSPACE }, select: { workspaceId: true } });
  return rows.map((r) => r.workspaceId);
}

export async function isMember(db: Db | DbTx, userId: string, workspaceId: string): Promise<boolean> {
  return (await memberRole(db, userId, workspaceId)) !== null;
}

/** The caller's personal workspace, created on first need (race-safe). */
export async function personalWorkspace(db: Db, userId: string): Promise<string> {
  const rows = await db.$queryRaw<{ id: string }[]>`
    SELECT w.id FROM workspaces w JOIN workspace_members m ON m.workspace_id = w.id
    WHERE m.user_id = ${userId}::uuid AND w.personal ORDER BY w.created_at LIMIT 1`;
  if (rows[0]) return rows[0].id;
  return db.$transaction(async (tx) => {
    // Serialise creation per user so two first requests make one personal workspace.
    await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext(${`personal-workspace:${userId}`}))`;
    const again = await tx.$queryRaw<{ id: string }[]>`
      SELECT w.id FROM workspaces w JOIN workspace_members m ON m.workspace_id = w.id
      WHERE m.user_id = ${userId}::uuid AND w.personal ORDER BY w.created_at LIMIT 1`;
    if (again[0]) return again[0].id;
    const ws = await tx.workspace.create({ data: { name: "Personal workspace", personal: true } });
    await tx.workspaceMember.create({ data: { workspaceId: ws.id, userId, role: "owner" } });
    return ws.id;
  });
}

/** The entity if the caller is a member of its workspace; otherwise 404. */
export async function entityForUser(db: Db | DbTx, userId: string, entityId: string) {
  if (!isUuid(entityId)) throw notFound("Entity");
  const entity = await db.entity.findFirst({
    where: { id: entityId, workspace: activeWorkspaceOf(userId) },
  });
  if (!entity) throw notFound("Entity");
  return entity;
}

/** The caller's role in a workspace, or null for a non-member (and for everyone while the workspace is being deleted). */
export async function memberRole(db: Db | DbTx, userId: string, workspaceId: string): Promise<string | null> {
  if (!isUuid(workspaceId)) return null;
  const rows = await db.$queryRaw<{ role: string }[]>`
    SELECT m.role FROM ${activeMembershipsOf(userId)} m WHERE m.workspace_id = ${workspaceId}::uuid`;
  return rows[0]?.role ?? null;
}

/** The caller's role in the workspace; 404 for a non-member (as for an unknown workspace). */
export async function roleOf(db: Db | DbTx, userId: string, workspaceId: string): Promise<Role> {
  const role = await memberRole(db, userId, workspaceId);
  if (role === null) throw notFound("Workspace");
  return role as Role;
}

/** The caller's role, which must be at least `needed`: 403 `forbidden` otherwise, 404 for a non-member. */
export async function requireRole(db: Db | DbTx, userId: string, workspaceId: string, needed: Role, what: string): Promise<Role> {
  const role = await roleOf(db, userId, workspaceId);
  if (!atLeast(role, needed))
    throw new AppError("forbidden", `Your role in this workspace (${role}) may not ${what}; that takes ${needed} or above.`);
  return role;
}

/** That the caller may write in the workspace: 403 `forbidden` for a viewer, 404 for a non-member. */
export async function requireWriter(db: Db | DbTx, userId: string, workspaceId: string, what: string): Promise<void> {
  await requireRole(db, userId, workspaceId, "editor", what);
}

/** The entity if the caller may write in its workspace: 404 for a non-member, 403 `forbidden` for a viewer. */
export async function writableEntityForUser(db: Db | DbTx, userId: string, entityId: string, what: string) {
  const entity = await entityForUser(db, userId, entityId);
  await requireWriter(db, userId, entity.workspaceId, what);
  return entity;
}

/** The project if the caller is a member of its workspace; otherwise 404. */
export async function projectForUser(db: Db | DbTx, userId: string, projectId: string) {
  if (!isUuid(projectId)) throw notFound("Project");
  const project = await db.project.findFirst({
    where: { id: projectId, workspace: activeWorkspaceOf(userId) },
  });
  if (!project) throw notFound("Project");
  return project;
}
