import type { Db, DbTx } from "../../platform/db.js";
import { isUniqueViolation } from "../../platform/db.js";
import { AppError, notFound } from "../../platform/errors.js";
import { atLeast, type Role } from "../../platform/roles.js";
import { ACTIVE_WORKSPACE, isUuid, requireRole, roleOf } from "./access.js";
import { audit } from "./audit.js";
import type { AddMemberInput, MemberRecord } from "./schemas.js";

/**
 * Members of a workspace. Every member reads the list; admins add, change and remove members (an
 * owner's role only an owner grants or takes); anyone may leave. A workspace always keeps one owner:
 * its last owner can be neither demoted nor removed. Changes to one workspace are serialised, so two
 * concurrent demotions cannot leave it without an owner. Every change is audited.
 */

/**
 * The caller's workspaces. One being deleted (src/governance/deletion/workspaces.ts) is listed for its owners
 * only, with its state and `purge_after`, so they can restore it; other members no longer see it.
 */
export async function listWorkspaces(db: Db, userId: string) {
  const rows = await db.workspaceMember.findMany({
    where: { userId, OR: [{ workspace: ACTIVE_WORKSPACE }, { role: "owner" }] },
    include: { workspace: true },
    orderBy: [{ workspace: { createdAt: "asc" } }, { workspaceId: "asc" }],
  });
  const workspaces = rows.map((m) => ({
    id: m.workspace.id,
    name: m.workspace.name,
    personal: m.workspace.personal,
    role: m.role as Role,
    created_at: m.workspace.createdAt.toISOString(),
    state: m.workspace.state as "active" | "deleting",
    retention_days: m.workspace.retentionDays,
    purge_after: m.workspace.purgeAfter?.toISOString() ?? null,
  }));
  return { workspaces, count: workspaces.length };
}

async function members(db: Db | DbTx, workspaceId: string): Promise<MemberRecord[]> {
  const active = await db.workspaceMember.findMany({
    where: { workspaceId },
    include: { user: { select: { email: true } } },
    orderBy: [{ createdAt: "asc" }, { id: "asc" }],
  });
  const invited = await db.workspaceInvitation.findMany({ where: { workspaceId }, orderBy: [{ createdAt: "asc" }, { id: "asc" }] });
  return [
    ...active.map((m) => ({
      id: m.id,
      user_id: m.userId,
      email: m.user.email,
      role: m.role as Role,
      status: "active" as const,
      added_by: m.addedBy,
      created_at: m.createdAt.toISOString(),
    })),
    ...invited.map((i) => ({
      id: i.id,
      user_id: null,
      email: i.email,
      role: i.role as Role,
      status: "invited" as const,
      added_by: i.addedBy,
      created_at: i.createdAt.toISOString(),
    })),
  ];
}

export async function listMembers(db: Db, userId: string, workspaceId: string) {
  await roleOf(db, userId, workspaceId);
  const list = await members(db, workspaceId);
  return { workspace_id: workspaceId, members: list, count: list.length };
}

/** Runs `change` with the workspace's membership locked, after checking the caller's role. */
async function changing<T>(db: Db, workspaceId: string, change: (tx: DbTx) => Promise<T>): Promise<T> {
  return db.$transaction(async (tx) => {
    await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext(${`members:${workspaceId}`}))`;
    return change(tx);
  });
}

const ownerOnly = (what: string) => new AppError("forbidden", `Only an owner may ${what}.`);

export async function addMember(db: Db, actorId: string, workspaceId: string, input: AddMemberInput): Promise<MemberRecord> {
  return changing(db, workspaceId, async (tx) => {
    const actorRole = await requireRole(tx, actorId, workspaceId, "admin", "add members");
    if (input.role === "owner" && actorRole !== "owner") throw ownerOnly("make someone an owner");
    const user = input.user_id ? await tx.user.findUnique({ where: { id: input.user_id } }) : await accountOfEmail(tx, input.email!);
    if (input.user_id && !user) throw notFound("User");
    if (user) {
      const exists = await tx.workspaceMember.findUnique({ where: { workspaceId_userId: { workspaceId, userId: user.id } } });
      if (exists) throw new AppError("conflict", "That user is already a member of this workspace; change their role with PATCH.");
      const member = await tx.workspaceMember.create({ data: { workspaceId, userId: user.id, role: input.role, addedBy: actorId } });
      await audit(tx, workspaceId, actorId, "member.added", member.id, { user_id: user.id, role: input.role });
      return (await members(tx, workspaceId)).find((m) => m.id === member.id)!;
    }
    try {
      const invitation = await tx.workspaceInvitation.create({
        data: { workspaceId, email: input.email!, role: input.role, addedBy: actorId },
      });
      await audit(tx, workspaceId, actorId, "member.invited", invitation.id, { email: input.email, role: input.role });
      return (await members(tx, workspaceId)).find((m) => m.id === invitation.id)!;
    } catch (err) {
      if (isUniqueViolation(err)) throw new AppError("conflict", "That email is already invited to this workspace.");
      throw err;
    }
  });
}

/**
 * The account an email names: the one that verified it at sign-in. Emails are not unique across
 * accounts (an identity provider may give two subjects one address), and an email a token only
 * claimed (`email_verified` not true) names no one. None: null (the caller invites the email). Two or
 * more: which person is meant is not known, so the caller is asked for the user id (409 `conflict`).
 */
async function accountOfEmail(tx: DbTx, email: string) {
  const verified = await tx.user.findMany({
    where: { email: { equals: email, mode: "insensitive" }, emailVerifiedAt: { not: null } },
    orderBy: { createdAt: "asc" },
    take: 2,
  });
  if (verified.length > 1) {
    throw new AppError(
      "conflict",
      "Several accounts have verified this email, so it does not say who is meant; add the member by user_id instead.",
    );
  }
  return verified[0] ?? null;
}

async function ownersLeft(tx: DbTx, workspaceId: string, without: string): Promise<number> {
  return tx.workspaceMember.count({ where: { workspaceId, role: "owner", NOT: { id: without } } });
}

const lastOwner = () =>
  new AppError("conflict", "This is the workspace's last owner: make another member an owner first (a workspace always keeps one).");

export async function changeRole(db: Db, actorId: string, workspaceId: string, memberId: string, role: Role): Promise<MemberRecord> {
  return changing(db, workspaceId, async (tx) => {
    const actorRole = await requireRole(tx, actorId, workspaceId, "admin", "change roles");
    const member = isUuid(memberId) ? await tx.workspaceMember.findFirst({ where: { id: memberId, workspaceId } }) : null;
    const invitation =
      member || !isUuid(memberId) ? null : await tx.workspaceInvitation.findFirst({ where: { id: memberId, workspaceId } });
    if (!member && !invitation) throw notFound("Member");
    const current = (member?.role ?? invitation!.role) as Role;
    if ((role === "owner" || current === "owner") && actorRole !== "owner") throw ownerOnly("grant or take an owner's role");
    if (current !== role) {
      if (member) {
        if (current === "owner" && (await ownersLeft(tx, workspaceId, member.id)) === 0) throw lastOwner();
        await tx.workspaceMember.update({ where: { id: member.id }, data: { role } });
      } else {
        await tx.workspaceInvitation.update({ where: { id: invitation!.id }, data: { role } });
      }
      await audit(tx, workspaceId, actorId, "member.role_changed", memberId, { from: current, to: role });
    }
    return (await members(tx, workspaceId)).find((m) => m.id === memberId)!;
  });
}

/** Removes a member or withdraws an invitation; a member may always leave, unless the last owner. */
export async function removeMember(db: Db, actorId: string, workspaceId: string, memberId: string): Promise<void> {
  await changing(db, workspaceId, async (tx) => {
    const actorRole = await roleOf(tx, actorId, workspaceId);
    const member = isUuid(memberId) ? await tx.workspaceMember.findFirst({ where: { id: memberId, workspaceId } }) : null;
    const invitation =
      member || !isUuid(memberId) ? null : await tx.workspaceInvitation.findFirst({ where: { id: memberId, workspaceId } });
    if (!member && !invitation) throw notFound("Member");
    const leaving = member?.userId === actorId;
    if (!leaving && !atLeast(actorRole, "admin")) {
      throw new AppError("forbidden", `Your role in this workspace (${actorRole}) may not remove members; that takes admin or above.`);
    }
    // One rule for an owner's membership and an owner's invitation, as for changing either (changeRole).
    if (member?.role === "owner" && !leaving && actorRole !== "owner") throw ownerOnly("remove an owner");
    if (invitation?.role === "owner" && actorRole !== "owner") throw ownerOnly("withdraw an owner's invitation");
    if (member) {
      if (member.role === "owner" && (await ownersLeft(tx, workspaceId, member.id)) === 0) throw lastOwner();
      await tx.workspaceMember.delete({ where: { id: member.id } });
      await audit(tx, workspaceId, actorId, leaving ? "member.left" : "member.removed", member.id, {
        user_id: member.userId,
        role: member.role,
      });
    } else {
      await tx.workspaceInvitation.delete({ where: { id: invitation!.id } });
      await audit(tx, workspaceId, actorId, "member.invitation_withdrawn", invitation!.id, { email: invitation!.email });
    }
  });
}

/**
 * At sign-in: the invitations of a user whose verified token carries `email` become memberships, and the
 * email is kept on the user row as verified (what adding a member by email matches). One statement;
 * nothing happens when there is nothing to accept.
 */
export async function acceptInvitations(db: Db, userId: string, email: string): Promise<number> {
  const accepted = await db.$queryRaw<{ n: bigint }[]>`
    WITH own AS (
      UPDATE users SET email = ${email}, email_verified_at = now()
      WHERE id = ${userId}::uuid AND (email IS DISTINCT FROM ${email} OR email_verified_at IS NULL) RETURNING id
    ), taken AS (
      DELETE FROM workspace_invitations WHERE lower(email) = lower(${email}) RETURNING id, workspace_id, role, added_by
    ), joined AS (
      INSERT INTO workspace_members (workspace_id, user_id, role, added_by)
      SELECT workspace_id, ${userId}::uuid, role, added_by FROM taken
      ON CONFLICT (workspace_id, user_id) DO NOTHING
      RETURNING id, workspace_id, role
    ), logged AS (
      INSERT INTO workspace_audit (workspace_id, actor_id, action, target, detail)
      SELECT workspace_id, ${userId}::uuid, 'member.joined', id::text, jsonb_build_object('email', ${email}::text, 'role', role) FROM joined
      RETURNING 1
    )
    SELECT count(*) AS n FROM logged`;
  return Number(accepted[0]?.n ?? 0);
}
