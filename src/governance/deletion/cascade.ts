import { rewriteAnalyses } from "../../insights/analysis/deletions.js";
import type { DeletionFacts, DeletionReason } from "../../insights/analysis/unavailable.js";
import { tallyRemovals } from "../../intake/coverage/removals.js";
import { type Db, type DbTx, Prisma } from "../../platform/db.js";
import { NOTE_ROW_KIND } from "../../platform/vocabulary.js";
import { deleteNoteSummaries, forgetKnowledgeQuotes, forgetSyncTitles } from "./knowledge.js";

/**
 * The cascade of deleting stored originals, inside the caller's transaction (one per original on the
 * DELETE route, one per batch of an erasure). For the given originals and every comment below them
 * (the `parent_id` chain), in this order:
 *
 * 1. the rows are locked (the originals first, then what answers them), so a concurrent ingest that
 *    reuses one as a parent waits for this transaction and then finds it gone;
 * 2. a tombstone per row (content_deletions: ids, kind, platform, reason, time; never words);
 * 3. analyses that quoted them are rewritten (analyses.ts), knowledge citations and stored receipts
 *    lose their quotes (knowledge.ts), a deleted meeting note's summary is deleted;
 * 4. their opinion units go (the rollup triggers subtract them; daily rollup rows left at zero,
 *    which would still name an aspect taken from the deleted words, are deleted);
 * 5. the coverage records of the runs that stored them count them as removed, by reason (one statement,
 *    src/intake/coverage/removals.ts; not for a workspace purge, whose records go with it);
 * 6. the rows go, with their embeddings and full-text vectors (columns of the row); the foreign key
 *    of knowledge snapshots sets their content_id to null and its trigger clears their text.
 */
export interface CascadeInput {
  workspaceId: string;
  rootIds: string[];
  reason: DeletionReason;
  actorId: string | null;
  erasureId: string | null;
}

export interface CascadeCounts {
  /** Content rows deleted: the originals given that still existed, and every comment below them. */
  rows: number;
  originals: number;
  comments: number;
  opinion_units: number;
  analyses_updated: number;
  analysis_events_updated: number;
  /** Insights and generated knowledge revisions renamed: a theme named after words only the deleted originals used. */
  generated_text_rewritten: number;
  insight_evidence_cleared: number;
  knowledge_snapshots_cleared: number;
  knowledge_citations_cleared: number;
  knowledge_receipts_updated: number;
  meeting_summaries_deleted: number;
  /** Coverage records of the runs that stored the rows, told of their removal (src/intake/coverage/removals.ts). */
  coverage_records_updated: number;
}

export interface DeletedRow {
  id: string;
  entityId: string;
  rootId: string;
  kind: string;
  platform: string;
  externalId: string | null;
  metaKind: string | null;
}

export const emptyCounts = (): CascadeCounts => ({
  rows: 0,
  originals: 0,
  comments: 0,
  opinion_units: 0,
  analyses_updated: 0,
  analysis_events_updated: 0,
  generated_text_rewritten: 0,
  insight_evidence_cleared: 0,
  knowledge_snapshots_cleared: 0,
  knowledge_citations_cleared: 0,
  knowledge_receipts_updated: 0,
  meeting_summaries_deleted: 0,
  coverage_records_updated: 0,
});

export async function deleteOriginals(tx: DbTx, input: CascadeInput): Promise<{ counts: CascadeCounts; rows: DeletedRow[]; at: Date }> {
  const counts = emptyCounts();
  const roots = await tx.$queryRaw<{ id: string }[]>`
    SELECT id FROM content_store WHERE id = ANY(${input.rootIds}::uuid[]) AND workspace_id = ${input.workspaceId}::uuid
    ORDER BY id FOR UPDATE`;
  // The transaction's time at the columns' precision: the snapshots' removed_at (CURRENT_TIMESTAMP) reads the same.
  const [{ at } = { at: new Date() }] = await tx.$queryRaw<{ at: Date }[]>`SELECT now()::timestamptz(3) AS at`;
  if (roots.length === 0) return { counts, rows: [], at };
  const rootIds = roots.map((r) => r.id);

  const rows = await tx.$queryRaw<DeletedRow[]>`
    WITH RECURSIVE tree AS (
      SELECT id, id AS root_id FROM content_store WHERE id = ANY(${rootIds}::uuid[])
      UNION
      SELECT c.id, t.root_id FROM content_store c JOIN tree t ON c.parent_id = t.id
    ), picked AS (
      SELECT DISTINCT ON (id) id, root_id FROM tree ORDER BY id, (id = root_id) DESC, root_id
    )
    SELECT c.id, c.entity_id AS "entityId", p.root_id AS "rootId", c.kind, c.platform, c.external_id AS "externalId",
      c.metadata->>'kind' AS "metaKind"
    FROM content_store c JOIN picked p ON p.id = c.id
    ORDER BY c.id FOR UPDATE OF c`;
  const ids = rows.map((r) => r.id);
  const rootSet = new Set(rootIds);
  counts.rows = rows.length;
  counts.originals = rows.filter((r) => rootSet.has(r.id)).length;
  counts.comments = counts.rows - counts.originals;

  await tx.$executeRaw`
    INSERT INTO content_deletions (content_id, workspace_id, entity_id, root_id, kind, platform, reason, erasure_id, deleted_by, deleted_at)
    SELECT c.id, c.workspace_id, c.entity_id, r.root_id, c.kind, c.platform, ${input.reason}, ${input.erasureId}::uuid,
      ${input.actorId}::uuid, ${at}
    FROM content_store c JOIN json_to_recordset(${JSON.stringify(rows.map((r) => ({ id: r.id, root_id: r.rootId })))}::json)
      AS r(id uuid, root_id uuid) ON r.id = c.id
    ON CONFLICT (content_id) DO NOTHING`;

  const facts: DeletionFacts = new Map(ids.map((id) => [id, { reason: input.reason, at: at.toISOString() }]));
  const analyses = await rewriteAnalyses(tx, input.workspaceId, ids, facts);
  counts.analyses_updated = analyses.analyses;
  counts.analysis_events_updated = analyses.events;
  counts.generated_text_rewritten = analyses.derivedRows;
  counts.insight_evidence_cleared = analyses.insightEvidence;
  const knowledge = await forgetKnowledgeQuotes(tx, ids);
  counts.knowledge_snapshots_cleared = knowledge.snapshots;
  counts.knowledge_citations_cleared = knowledge.citations;
  counts.knowledge_receipts_updated = knowledge.receipts;
  const notes = rows.filter((r) => r.metaKind === NOTE_ROW_KIND && r.kind === "source");
  counts.meeting_summaries_deleted = await deleteNoteSummaries(tx, notes);
  await forgetSyncTitles(tx, notes);

  counts.opinion_units = await tx.$executeRaw`DELETE FROM opinion_units WHERE content_id = ANY(${ids}::uuid[])`;
  if (counts.opinion_units > 0) {
    // The unit triggers hold each entity's rollup lock until commit, so these zero rows are ours to drop.
    const entities = [...new Set(rows.map((r) => r.entityId))];
    await tx.$executeRaw`
      DELETE FROM opinion_rollups WHERE entity_id = ANY(${entities}::uuid[]) AND statements = 0 AND sources = 0`;
    await tx.$executeRaw`DELETE FROM opinion_source_rollups WHERE entity_id = ANY(${entities}::uuid[]) AND sources = 0`;
  }
  if (input.reason !== "workspace_deleted") counts.coverage_records_updated = await tallyRemovals(tx, ids, input.reason, at);
  // The enrichment rows in one statement (the foreign key's cascade would delete them one original at a time).
  await tx.$executeRaw`DELETE FROM content_enrichment WHERE content_id = ANY(${ids}::uuid[])`;
  await tx.$executeRaw`DELETE FROM content_store WHERE id = ANY(${ids}::uuid[])`;
  return { counts, rows, at };
}

/** Deadlocks and serialisation failures leave nothing behind: the whole transaction may run again. */
export function isRetryable(err: unknown): boolean {
  const e = err as { code?: unknown; meta?: { code?: unknown; driverAdapterError?: { cause?: { originalCode?: unknown } } } } | null;
  const codes = [e?.code, e?.meta?.code, e?.meta?.driverAdapterError?.cause?.originalCode];
  if (codes.some((c) => c === "40P01" || c === "40001" || c === "P2034")) return true;
  return err instanceof Prisma.PrismaClientKnownRequestError && /deadlock detected|could not serialize access/i.test(err.message);
}

/**
 * One transaction of a deletion, run again (three tries in all) when PostgreSQL aborted it on a deadlock or
 * a serialisation failure, which leave nothing behind.
 */
export async function retryingTransaction<T>(db: Db, work: (tx: DbTx) => Promise<T>, timeout = 120_000): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await db.$transaction(work, { maxWait: 10_000, timeout });
    } catch (err) {
      if (attempt >= 3 || !isRetryable(err)) throw err;
    }
  }
}
