import { isUuid, memberRole } from "../../access/workspaces/access.js";
import { audit } from "../../access/workspaces/audit.js";
import { nextChangeSeq } from "../../insights/knowledge/changes.js";
import { insightInScope } from "../../insights/knowledge/records.js";
import { resolveWritableScope, type ScopeInput } from "../../insights/knowledge/scope.js";
import type { Db, DbTx } from "../../platform/db.js";
import { notFound } from "../../platform/errors.js";
import { retryingTransaction } from "./cascade.js";
import type { RecordDeletionReceipt } from "./schemas.js";

/**
 * `DELETE /agent/v1/knowledge/insights/{insight_id}` (editors and above, in the record's scope): one
 * transaction locks the record, numbers a `deleted` event in the scope's change feed (title empty), clears
 * the title of the record's earlier events (they keep their numbers, so the feed stays gap-free), deletes
 * the record with its revisions, their citations, the write receipts that replay it and the actions derived
 * from its revisions (foreign keys), and the share links to it, records a tombstone (`deletion_records`) and
 * writes the audit entry. The snapshots it cited stay: they are copies of originals still stored, shared
 * with the scope's other records, and go with their original. A second delete finds the tombstone: the
 * same checks, then 204.
 */

interface Located {
  workspaceId: string;
  live: boolean;
}

async function locate(db: Db, userId: string, insightId: string): Promise<Located | null> {
  if (!isUuid(insightId)) return null;
  const rows = await db.$queryRaw<{ workspace_id: string; live: boolean }[]>`
    SELECT workspace_id, true AS live FROM knowledge_insights WHERE id = ${insightId}::uuid
    UNION ALL
    SELECT workspace_id, false FROM deletion_records WHERE kind = 'knowledge_record' AND resource_id = ${insightId}::uuid
    LIMIT 1`;
  const row = rows[0];
  if (!row || (await memberRole(db, userId, row.workspace_id)) === null) return null;
  return { workspaceId: row.workspace_id, live: row.live };
}

export async function deleteKnowledgeRecord(
  db: Db,
  userId: string,
  insightId: string,
  scopeInput: ScopeInput,
): Promise<RecordDeletionReceipt | null> {
  const found = await locate(db, userId, insightId);
  if (!found) throw notFound("Insight");
  const scope = await resolveWritableScope(db, userId, scopeInput);
  if (!found.live) {
    const gone = await db.deletionRecord.findFirst({ where: { kind: "knowledge_record", resourceId: insightId, scopeId: scope.id } });
    if (!gone) throw notFound("Insight");
    return null;
  }
  await insightInScope(db, scope, insightId);

  return retryingTransaction(db, (tx) => remove(tx, userId, insightId, scope), 60_000);
}

interface LockedRecord {
  id: string;
  workspace_id: string;
  entity_id: string | null;
  project_id: string | null;
  scope_id: string;
  revision: number;
  origin: string;
}

async function remove(
  tx: DbTx,
  userId: string,
  insightId: string,
  scope: { id: string; workspaceId: string },
): Promise<RecordDeletionReceipt | null> {
  const [record] = await tx.$queryRaw<LockedRecord[]>`
    SELECT id, workspace_id, entity_id, project_id, scope_id, revision, origin FROM knowledge_insights
    WHERE id = ${insightId}::uuid AND scope_id = ${scope.id}::uuid FOR UPDATE`;
  // Deleted meanwhile by another request: nothing left to do.
  if (!record) return null;
  const seq = await nextChangeSeq(tx, record.scope_id);
  const eventsCleared = await tx.$executeRaw`
    UPDATE knowledge_changes SET title = '' WHERE scope_id = ${record.scope_id}::uuid AND insight_id = ${insightId}::uuid`;
  await tx.knowledgeChange.create({
    data: {
      scopeId: record.scope_id,
      seq,
      insightId,
      revision: record.revision,
      kind: "deleted",
      origin: record.origin,
      actorId: userId,
      title: "",
    },
  });
  const [counts] = await tx.$queryRaw<{ revisions: number; citations: number; actions: number }[]>`
    SELECT (SELECT count(*)::int FROM knowledge_insight_revisions WHERE insight_id = ${insightId}::uuid) AS revisions,
      (SELECT count(*)::int FROM knowledge_revision_evidence WHERE insight_id = ${insightId}::uuid) AS citations,
      (SELECT count(*)::int FROM actions WHERE insight_id = ${insightId}::uuid) AS actions`;
  const shareLinks = await tx.$executeRaw`
    DELETE FROM share_links WHERE workspace_id = ${record.workspace_id}::uuid AND resource_kind = 'knowledge_record'
      AND resource_id = ${insightId}::uuid`;
  // Revisions, their citations, write receipts and derived actions (with their executions) go by foreign key.
  await tx.$executeRaw`DELETE FROM knowledge_insights WHERE id = ${insightId}::uuid`;
  const [{ at } = { at: new Date() }] = await tx.$queryRaw<{ at: Date }[]>`SELECT now()::timestamptz(3) AS at`;
  await tx.deletionRecord.create({
    data: {
      kind: "knowledge_record",
      resourceId: insightId,
      workspaceId: record.workspace_id,
      scopeId: record.scope_id,
      status: "completed",
      requestedBy: userId,
      finishedAt: at,
      createdAt: at,
    },
  });
  const removed = {
    revisions: counts?.revisions ?? 0,
    citations: counts?.citations ?? 0,
    actions: counts?.actions ?? 0,
    share_links: shareLinks,
    change_events_cleared: eventsCleared,
  };
  await audit(tx, record.workspace_id, userId, "knowledge_record.deleted", insightId, {
    insight_id: insightId,
    entity_id: record.entity_id,
    project_id: record.project_id,
    change_seq: seq.toString(),
    ...removed,
  });
  return {
    insight_id: insightId,
    deleted: true,
    deleted_at: at.toISOString(),
    entity_id: record.entity_id,
    project_id: record.project_id,
    revision: record.revision,
    change_seq: seq.toString(),
    removed,
  };
}
