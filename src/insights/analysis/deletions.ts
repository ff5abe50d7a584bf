import type { DbTx } from "../../platform/db.js";
import { candidatePhrases, exclusivePhrases, scrubDerivedRows, scrubResult } from "./deleted-phrases.js";
import type { ResultData } from "./schemas.js";
import { citedIds, type DeletionFacts, type DeletionReason, forgetInEvent, forgetInResult } from "./unavailable.js";

/**
 * Analyses that quoted deleted originals, rewritten in the deleting transaction: the stored result,
 * the stored `evidence` and `result` events (what a replay of the stream sends) and the insight
 * evidence rows keep each citation, without its words (see unavailable.ts), and a theme named
 * after words only the deleted originals used loses that name (deleted-phrases.ts). Found through the
 * evidence events (indexed on their content id), which every analysis writes before its result, and
 * through `insight_evidence`. Runs while the deleted rows are still stored (they are read for that).
 */
export interface AnalysisRewrite {
  analyses: number;
  events: number;
  insightEvidence: number;
  derivedRows: number;
}

const asJson = (value: unknown) => JSON.stringify(value);

export async function rewriteAnalyses(tx: DbTx, workspaceId: string, ids: string[], facts: DeletionFacts): Promise<AnalysisRewrite> {
  const out: AnalysisRewrite = { analyses: 0, events: 0, insightEvidence: 0, derivedRows: 0 };
  if (ids.length === 0) return out;
  // Each analysis row is locked, so no event of it is appended while it is rewritten.
  const analyses = await tx.$queryRaw<{ id: string; result: { status?: string; data?: Partial<ResultData> } | null }[]>`
    SELECT a.id, a.result FROM analyses a
    WHERE a.id IN (
      SELECT e.analysis_id FROM analysis_events e WHERE e.event = 'evidence' AND (e.data->>'content_id') = ANY(${ids}::text[])
      UNION
      SELECT i.analysis_id FROM insight_evidence v JOIN entity_insights i ON i.id = v.insight_id
      WHERE v.content_id = ANY(${ids}::uuid[]) AND i.analysis_id IS NOT NULL)
    ORDER BY a.id FOR UPDATE OF a`;
  const exclusive = new Set(
    await exclusivePhrases(tx, workspaceId, ids, [...new Set(analyses.flatMap((a) => candidatePhrases(a.result?.data)))]),
  );
  for (const analysis of analyses) {
    let changed = false;
    const data = analysis.result?.data;
    const phrases = candidatePhrases(data).filter((p) => exclusive.has(p));
    const next = data ? scrubResult(forgetInResult(data, facts) ?? data, phrases) : data;
    if (asJson(next) !== asJson(data)) {
      await tx.$executeRaw`UPDATE analyses SET result = ${asJson({ ...analysis.result, data: next })}::jsonb WHERE id = ${analysis.id}::uuid`;
      changed = true;
    }
    const events = await rewriteEvents(tx, analysis.id, facts, phrases);
    const derived = await scrubDerivedRows(tx, analysis.id, phrases);
    out.events += events;
    out.derivedRows += derived;
    if (changed || events > 0 || derived > 0) out.analyses += 1;
  }
  out.insightEvidence = await tx.$executeRaw`
    UPDATE insight_evidence SET quote = '', start_offset = NULL, end_offset = NULL, opinion_unit_id = NULL
    WHERE content_id = ANY(${ids}::uuid[]) AND (quote <> '' OR opinion_unit_id IS NOT NULL)`;
  return out;
}

/** The stored evidence and result events of one analysis, rewritten; answers how many changed. */
async function rewriteEvents(tx: DbTx, analysisId: string, facts: DeletionFacts, phrases: string[] = []): Promise<number> {
  const rows = await tx.$queryRaw<{ id: bigint; event: string; data: Record<string, unknown> }[]>`
    SELECT id, event, data FROM analysis_events
    WHERE analysis_id = ${analysisId}::uuid AND event IN ('evidence', 'result') ORDER BY seq`;
  let changed = 0;
  for (const row of rows) {
    const next = forgetInEvent(row.event, row.data, facts, (d) => scrubResult(d, phrases));
    if (next === null || asJson(next) === asJson(row.data)) continue;
    await tx.$executeRaw`UPDATE analysis_events SET data = ${asJson(next)}::jsonb WHERE id = ${row.id}`;
    changed += 1;
  }
  return changed;
}

/** Why and when each of `ids` was deleted (tombstones; "deleted", now, for a row gone without one). */
export async function deletionFacts(tx: DbTx, ids: string[]): Promise<DeletionFacts> {
  const facts: DeletionFacts = new Map();
  if (ids.length === 0) return facts;
  const rows = await tx.$queryRaw<{ content_id: string; reason: DeletionReason; deleted_at: Date }[]>`
    SELECT content_id, reason, deleted_at FROM content_deletions WHERE content_id = ANY(${ids}::uuid[])`;
  for (const r of rows) facts.set(r.content_id, { reason: r.reason, at: r.deleted_at.toISOString() });
  const now = new Date().toISOString();
  for (const id of ids) if (!facts.has(id)) facts.set(id, { reason: "deleted", at: now });
  return facts;
}

/**
 * For an analysis storing its result (src/insights/analysis/runner.ts, in the result's transaction): the
 * originals it cites are share-locked, so none is deleted until the result commits (a deletion then
 * finds it); any already deleted is forgotten in `data` (in place) and in the evidence events stored
 * before. Answers how many cited originals were gone.
 */
export async function forgetDeletedCitations(tx: DbTx, analysisId: string, data: ResultData): Promise<number> {
  const ids = citedIds(data);
  if (ids.length === 0) return 0;
  const present = await tx.$queryRaw<{ id: string }[]>`
    SELECT id FROM content_store WHERE id = ANY(${ids}::uuid[]) ORDER BY id FOR SHARE`;
  const found = new Set(present.map((r) => r.id));
  const gone = ids.filter((id) => !found.has(id));
  if (gone.length === 0) return 0;
  const facts = await deletionFacts(tx, gone);
  Object.assign(data, forgetInResult(data, facts));
  await rewriteEvents(tx, analysisId, facts);
  return gone.length;
}
