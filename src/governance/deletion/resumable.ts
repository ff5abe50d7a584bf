import type { DeletionRecord } from "../../generated/prisma/client.js";
import type { Db } from "../../platform/db.js";
import type { AppDeps } from "../../platform/deps.js";
import { notFound } from "../../platform/errors.js";

/**
 * The deletion of one entity or project (`deletion_records`, one per resource): found, or recorded by
 * `record` (which does nothing when a concurrent request recorded it first). A deletion whose job's last
 * attempt failed is `running` again, so asking again resumes it where its batches stopped. Answers null
 * once it completed; `what` names the resource in the 404 when it vanished meanwhile.
 */
export async function openDeletion(
  db: Db,
  kind: "entity" | "project",
  resourceId: string,
  what: string,
  record: () => Promise<unknown>,
): Promise<DeletionRecord | null> {
  let row = await findDeletion(db, kind, resourceId);
  if (!row) {
    await record();
    row = await findDeletion(db, kind, resourceId);
    if (!row) throw notFound(what);
  }
  if (row.status === "completed") return null;
  if (row.status === "failed") {
    await db.$executeRaw`
      UPDATE deletion_records SET status = 'running', error = NULL, updated_at = clock_timestamp()
      WHERE id = ${row.id}::uuid AND status = 'failed'`;
  }
  return row;
}

export const findDeletion = (db: Db, kind: "entity" | "project", resourceId: string) =>
  db.deletionRecord.findUnique({ where: { kind_resourceId: { kind, resourceId } } });

/** After a deletion job's last attempt failed: the deletion says so; asking for the deletion again resumes it. */
export async function markDeletionFailed(deps: Pick<AppDeps, "db">, deletionId: string, error: Error): Promise<void> {
  await deps.db.$executeRaw`
    UPDATE deletion_records SET status = 'failed', error = ${error.message.slice(0, 2000)}, updated_at = clock_timestamp()
    WHERE id = ${deletionId}::uuid AND status = 'running'`;
}
