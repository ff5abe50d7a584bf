import { createHash, randomBytes } from "node:crypto";
import { ACTIVE_WORKSPACE, entityForUser, isMember, isUuid, personalWorkspace, requireWriter } from "../../access/workspaces/access.js";
import { audit } from "../../access/workspaces/audit.js";
import { analysisForUser, analysisWorkspace } from "../../insights/analysis/service.js";
import type { Db } from "../../platform/db.js";
import { notFound } from "../../platform/errors.js";
import type { CreatedShareLink, CreateShareLinkInput, ListShareLinksQuery, ShareLinkRecord, ShareResource } from "./schemas.js";

/**
 * Share links: who may make them and what a token opens. A link belongs to the workspace of its
 * resource; editors and above create and revoke links, every member lists them. The token is 32
 * random bytes (base64url) and only its SHA-256 is stored, so the URL is shown once. A token opens
 * its one page and that page's event stream, nothing else: it is not a credential of the API.
 */
export interface ShareLinkRow {
  id: string;
  workspaceId: string;
  resourceKind: string;
  resourceId: string;
  createdBy: string | null;
  createdAt: Date;
  expiresAt: Date;
  revokedAt: Date | null;
}

export const SHARE_PATH = "/share";
const TOKEN_RE = /^[A-Za-z0-9_-]{43}$/;

export const hashShareToken = (token: string) => createHash("sha256").update(token, "utf8").digest("hex");

const stateOf = (row: ShareLinkRow, now: Date): ShareLinkRecord["state"] =>
  row.revokedAt ? "revoked" : row.expiresAt <= now ? "expired" : "active";

export const toShareLinkRecord = (row: ShareLinkRow, now = new Date()): ShareLinkRecord => ({
  id: row.id,
  workspace_id: row.workspaceId,
  resource: row.resourceKind as ShareResource,
  resource_id: row.resourceId,
  state: stateOf(row, now),
  created_by: row.createdBy,
  created_at: row.createdAt.toISOString(),
  expires_at: row.expiresAt.toISOString(),
  revoked_at: row.revokedAt ? row.revokedAt.toISOString() : null,
});

const LABELS: Record<ShareResource, string> = { analysis: "Analysis", knowledge_record: "Knowledge record", entity: "Entity" };

/** The workspace the resource belongs to, if the caller is a member there; 404 otherwise. */
async function workspaceOfResource(db: Db, userId: string, resource: ShareResource, id: string): Promise<string> {
  if (resource === "entity") return (await entityForUser(db, userId, id)).workspaceId;
  if (resource === "analysis") {
    // An analysis is the workspace's it reads (src/insights/analysis/scope.ts); one of no workspace (its starter was a
    // member of none, and it read nothing) is its starter's alone, and its links live in their personal workspace.
    const { workspaceId } = await analysisForUser(db, userId, id);
    return workspaceId ?? personalWorkspace(db, userId);
  }
  const record = isUuid(id) ? await db.knowledgeInsight.findUnique({ where: { id }, select: { workspaceId: true } }) : null;
  if (!record || !(await isMember(db, userId, record.workspaceId))) throw notFound(LABELS[resource]);
  return record.workspaceId;
}

export async function createShareLink(db: Db, userId: string, input: CreateShareLinkInput, baseUrl: string): Promise<CreatedShareLink> {
  const workspaceId = await workspaceOfResource(db, userId, input.resource, input.id);
  await requireWriter(db, userId, workspaceId, "share pages outside the workspace");
  const token = randomBytes(32).toString("base64url");
  const now = new Date();
  const row = await db.$transaction(async (tx) => {
    const created = await tx.shareLink.create({
      data: {
        workspaceId,
        resourceKind: input.resource,
        resourceId: input.id,
        tokenHash: hashShareToken(token),
        createdBy: userId,
        createdAt: now,
        expiresAt: new Date(now.getTime() + input.expires_in * 1000),
      },
    });
    await audit(tx, workspaceId, userId, "share_link.created", created.id, {
      resource: input.resource,
      resource_id: input.id,
      expires_at: created.expiresAt.toISOString(),
    });
    return created;
  });
  return { ...toShareLinkRecord(row, now), url: `${baseUrl.replace(/\/+$/, "")}${SHARE_PATH}/${token}` };
}

export async function listShareLinks(db: Db, userId: string, query: ListShareLinksQuery) {
  if (!(await isMember(db, userId, query.workspace_id))) throw notFound("Workspace");
  const where = {
    workspaceId: query.workspace_id,
    ...(query.resource ? { resourceKind: query.resource } : {}),
    ...(query.id ? { resourceId: query.id } : {}),
  };
  const limit = query.limit ?? 100;
  const offset = query.offset ?? 0;
  const [rows, total] = await Promise.all([
    db.shareLink.findMany({ where, orderBy: [{ createdAt: "desc" }, { id: "desc" }], take: limit, skip: offset }),
    db.shareLink.count({ where }),
  ]);
  const now = new Date();
  return { links: rows.map((r) => toShareLinkRecord(r, now)), total, limit, offset };
}

/** Revokes the link at once (the next request for its page is a 404); revoking it again changes nothing. */
export async function revokeShareLink(db: Db, userId: string, linkId: string): Promise<void> {
  const link = isUuid(linkId) ? await db.shareLink.findUnique({ where: { id: linkId } }) : null;
  if (!link || !(await isMember(db, userId, link.workspaceId))) throw notFound("Share link");
  await requireWriter(db, userId, link.workspaceId, "revoke share links");
  await db.$transaction(async (tx) => {
    const revoked = await tx.shareLink.updateMany({
      where: { id: link.id, revokedAt: null },
      data: { revokedAt: new Date(), revokedBy: userId },
    });
    if (revoked.count === 1) {
      await audit(tx, link.workspaceId, userId, "share_link.revoked", link.id, {
        resource: link.resourceKind,
        resource_id: link.resourceId,
      });
    }
  });
}

/** The live link a token opens, or null (malformed, unknown, revoked or expired: the caller cannot tell which). */
export async function openShareLink(db: Db, token: string): Promise<ShareLinkRow | null> {
  if (!TOKEN_RE.test(token)) return null;
  // A link of a workspace being deleted opens nothing (src/governance/deletion/workspaces.ts).
  const row = await db.shareLink.findFirst({ where: { tokenHash: hashShareToken(token), workspace: ACTIVE_WORKSPACE } });
  if (!row || row.revokedAt || row.expiresAt <= new Date()) return null;
  return row;
}

/** The workspace an analysis belongs to for its links: its own, else its starter's personal one. */
export async function analysisLinkWorkspace(db: Db, row: Parameters<typeof analysisWorkspace>[1]): Promise<string> {
  return (await analysisWorkspace(db, row)) ?? personalWorkspace(db, row.userId);
}
