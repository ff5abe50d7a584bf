import { isUuid } from "../../access/workspaces/access.js";
import type { Db } from "../../platform/db.js";
import { notFound } from "../../platform/errors.js";
import type { PageDeletionReceipt } from "./schemas.js";

/**
 * `DELETE /agent/v1/context/pages/{page_id}`: one of the caller's own saved context pages. Its text,
 * tags, embedding and full-text entry are columns of the row, so one statement removes them; each
 * process's cached vectors (src/insights/context/vectors.ts) notice the user's page count fell at the next recall
 * and drop it. A tombstone (`deletion_records`, kind `page`, the owner's id, never the path or title)
 * makes a second delete a 204; another user's page, or an id nobody saved, is a 404. Pages belong to an
 * account, not a workspace, so there is no workspace audit entry.
 */
export async function deleteContextPage(db: Db, userId: string, pageId: string): Promise<PageDeletionReceipt | null> {
  if (!isUuid(pageId)) throw notFound("Page");
  return db.$transaction(async (tx) => {
    const deleted = await tx.$queryRaw<{ id: string; version: number; project_id: string | null; at: Date }[]>`
      DELETE FROM pages WHERE id = ${pageId}::uuid AND user_id = ${userId}::uuid
      RETURNING id::text AS id, version, project_id::text AS project_id, now()::timestamptz(3) AS at`;
    const page = deleted[0];
    if (!page) {
      const gone = await tx.deletionRecord.findFirst({ where: { kind: "page", resourceId: pageId, ownerId: userId } });
      if (!gone) throw notFound("Page");
      return null;
    }
    await tx.deletionRecord.create({
      data: {
        kind: "page",
        resourceId: pageId,
        ownerId: userId,
        status: "completed",
        requestedBy: userId,
        createdAt: page.at,
        finishedAt: page.at,
      },
    });
    return { page_id: page.id, deleted: true, deleted_at: page.at.toISOString(), project_id: page.project_id, version: page.version };
  });
}
