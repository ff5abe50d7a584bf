import type { Db, DbTx, Prisma } from "../../platform/db.js";
import { requireRole } from "./access.js";

/**
 * The workspace audit log: who changed what, when. Membership and role changes, API keys created and
 * revoked by members, webhook endpoints and routines are recorded in the transaction of the change;
 * admins read it newest first.
 */
export function audit(tx: Db | DbTx, workspaceId: string, actorId: string | null, action: string, target: string | null, detail: object) {
  return tx.workspaceAudit.create({
    data: { workspaceId, actorId, action, target, detail: detail as Prisma.InputJsonValue },
  });
}

/** One entry in every workspace the user is a member of (their API keys act in all of them). */
export async function auditForMember(tx: Db | DbTx, userId: string, action: string, target: string, detail: object): Promise<void> {
  const memberships = await tx.workspaceMember.findMany({ where: { userId }, select: { workspaceId: true } });
  if (memberships.length === 0) return;
  await tx.workspaceAudit.createMany({
    data: memberships.map((m) => ({
      workspaceId: m.workspaceId,
      actorId: userId,
      action,
      target,
      detail: detail as Prisma.InputJsonValue,
    })),
  });
}

export async function readAudit(db: Db, userId: string, workspaceId: string, limit = 100) {
  await requireRole(db, userId, workspaceId, "admin", "read the audit log");
  const rows = await db.workspaceAudit.findMany({ where: { workspaceId }, orderBy: { id: "desc" }, take: limit });
  return {
    workspace_id: workspaceId,
    entries: rows.map((r) => ({
      id: r.id.toString(),
      actor_id: r.actorId,
      action: r.action,
      target: r.target,
      detail: r.detail as Record<string, unknown>,
      created_at: r.createdAt.toISOString(),
    })),
    count: rows.length,
  };
}
