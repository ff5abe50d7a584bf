import { isMember, isUuid, requireWriter } from "../../access/workspaces/access.js";
import { audit } from "../../access/workspaces/audit.js";
import type { Db } from "../../platform/db.js";
import { notFound } from "../../platform/errors.js";
import { type CascadeCounts, deleteOriginals, retryingTransaction } from "./cascade.js";
import type { DeletionReceipt } from "./schemas.js";

/**
 * `DELETE /agent/v1/content/{content_id}`: one stored original (a source, a comment, an utterance)
 * and every comment below it, in one transaction with its audit entry. The caller must be an editor
 * or above in the original's workspace (a viewer gets 403, anyone else 404 as for an unknown id). An
 * original already deleted is found by its tombstone: the same checks, then nothing to do (null).
 */

async function workspaceOf(db: Db, contentId: string): Promise<{ workspaceId: string; live: boolean } | null> {
  const rows = await db.$queryRaw<{ workspace_id: string; live: boolean }[]>`
    SELECT workspace_id, true AS live FROM content_store WHERE id = ${contentId}::uuid
    UNION ALL
    SELECT workspace_id, false FROM content_deletions WHERE content_id = ${contentId}::uuid
    LIMIT 1`;
  const row = rows[0];
  return row ? { workspaceId: row.workspace_id, live: row.live } : null;
}

export async function deleteContent(db: Db, userId: string, contentId: string): Promise<DeletionReceipt | null> {
  const found = isUuid(contentId) ? await workspaceOf(db, contentId) : null;
  // Another tenant's original answers what an unknown id answers, so an id's existence never leaks.
  if (!found || !(await isMember(db, userId, found.workspaceId))) throw notFound("Content");
  await requireWriter(db, userId, found.workspaceId, "delete stored originals");
  if (!found.live) return null;

  return retryingTransaction(
    db,
    async (tx) => {
      const { counts, rows, at } = await deleteOriginals(tx, {
        workspaceId: found.workspaceId,
        rootIds: [contentId],
        reason: "deleted",
        actorId: userId,
        erasureId: null,
      });
      // Deleted meanwhile by another request: nothing left to do.
      const root = rows.find((r) => r.id === contentId);
      if (!root) return null;
      await audit(tx, found.workspaceId, userId, "content.deleted", contentId, {
        content_id: contentId,
        entity_id: root.entityId,
        kind: root.kind,
        platform: root.platform,
        ...counts,
      });
      return receipt(contentId, root, counts, at);
    },
    60_000,
  );
}

function receipt(
  contentId: string,
  root: { entityId: string; kind: string; platform: string },
  counts: CascadeCounts,
  at: Date,
): DeletionReceipt {
  return {
    content_id: contentId,
    deleted: true,
    reason: "deleted",
    deleted_at: at.toISOString(),
    entity_id: root.entityId,
    kind: root.kind,
    platform: root.platform,
    removed: counts,
  };
}
