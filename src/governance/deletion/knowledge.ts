import type { DbTx } from "../../platform/db.js";

/**
 * Knowledge records that cited deleted originals keep their own text and each citation, without its
 * words: the quote of every citation of a snapshot of a deleted original is cleared, and so is the
 * copy in the stored receipt a retried write replays. The snapshots themselves lose their text when
 * the original goes (the trigger of migration 20261122140000, fired by the foreign key's SET NULL),
 * so reads answer the citation unavailable, with the tombstone's reason and time.
 */
export interface KnowledgeForget {
  snapshots: number;
  citations: number;
  receipts: number;
}

interface ReceiptEvidence {
  source_revision_id?: string;
  content_id?: string;
  quote?: string;
}

export async function forgetKnowledgeQuotes(tx: DbTx, ids: string[]): Promise<KnowledgeForget> {
  const snapshots = await tx.$queryRaw<{ id: string }[]>`
    SELECT id FROM knowledge_source_revisions WHERE content_id = ANY(${ids}::uuid[]) ORDER BY id FOR UPDATE`;
  const snapshotIds = snapshots.map((s) => s.id);
  if (snapshotIds.length === 0) return { snapshots: 0, citations: 0, receipts: 0 };
  const citations = await tx.$executeRaw`
    UPDATE knowledge_revision_evidence SET quote = '' WHERE source_revision_id = ANY(${snapshotIds}::uuid[]) AND quote <> ''`;

  const gone = new Set(snapshotIds);
  const receipts = await tx.$queryRaw<{ user_id: string; request_id: string; receipt: { record?: { evidence?: ReceiptEvidence[] } } }[]>`
    SELECT user_id, request_id, receipt FROM knowledge_write_requests
    WHERE insight_id IN (SELECT DISTINCT insight_id FROM knowledge_revision_evidence WHERE source_revision_id = ANY(${snapshotIds}::uuid[]))
    ORDER BY user_id, request_id FOR UPDATE`;
  let rewritten = 0;
  for (const row of receipts) {
    const evidence = row.receipt.record?.evidence;
    if (!Array.isArray(evidence) || !evidence.some((e) => gone.has(e.source_revision_id ?? "") && e.quote)) continue;
    const next = {
      ...row.receipt,
      record: { ...row.receipt.record, evidence: evidence.map((e) => (gone.has(e.source_revision_id ?? "") ? { ...e, quote: "" } : e)) },
    };
    await tx.$executeRaw`
      UPDATE knowledge_write_requests SET receipt = ${JSON.stringify(next)}::jsonb
      WHERE user_id = ${row.user_id}::uuid AND request_id = ${row.request_id}`;
    rewritten += 1;
  }
  return { snapshots: snapshotIds.length, citations, receipts: rewritten };
}

/**
 * The stored answers of meeting-note syncs (`note_syncs.result`, replayed to a repeated sync) name each
 * imported note with its title: a deleted note row's title is cleared there.
 */
export async function forgetSyncTitles(tx: DbTx, notes: { id: string; entityId: string }[]): Promise<number> {
  if (notes.length === 0) return 0;
  const ids = notes.map((n) => n.id);
  const syncs = await tx.$queryRaw<{ id: string; result: { notes?: { content_id?: string | null; title?: string }[] } }[]>`
    SELECT id, result FROM note_syncs
    WHERE entity_id = ANY(${[...new Set(notes.map((n) => n.entityId))]}::uuid[]) AND result IS NOT NULL
      AND (result->'content_ids') ?| ${ids}::text[]
    ORDER BY id FOR UPDATE`;
  const gone = new Set(ids);
  for (const sync of syncs) {
    const next = {
      ...sync.result,
      notes: (sync.result.notes ?? []).map((n) => (n.content_id && gone.has(n.content_id) ? { ...n, title: "" } : n)),
    };
    await tx.$executeRaw`UPDATE note_syncs SET result = ${JSON.stringify(next)}::jsonb WHERE id = ${sync.id}::uuid`;
  }
  return syncs.length;
}

/** A deleted meeting note's own row takes its summary (`knowledge`, kind meeting_summary) with it. */
export async function deleteNoteSummaries(
  tx: DbTx,
  notes: { entityId: string; platform: string; externalId: string | null }[],
): Promise<number> {
  const keyed = notes.filter((n) => n.externalId !== null);
  if (keyed.length === 0) return 0;
  return tx.$executeRaw`
    DELETE FROM knowledge k
    USING json_to_recordset(${JSON.stringify(keyed)}::json) AS n("entityId" uuid, platform text, "externalId" text)
    WHERE k.kind = 'meeting_summary' AND k.entity_id = n."entityId" AND k.platform = n.platform AND k.external_id = n."externalId"`;
}
