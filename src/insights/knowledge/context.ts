import type { Db } from "../../platform/db.js";
import { codePointLength } from "../../platform/text.js";
import { type EvidenceRow, INSIGHT_COLUMNS, type InsightRow, type RevisionRow } from "./records.js";
import type { Relation } from "./schemas.js";
import type { KnowledgeScope } from "./scope.js";
import { isAvailable, loadSnapshots, type Snapshot, unavailableOf } from "./sources.js";

/**
 * A bounded Markdown view of a scope's current records (most recently updated first) with
 * their quotes, for an agent's context window. `max_chars` bounds the Markdown (in code
 * points); a record whose block does not fit in what is left is omitted whole (listed in
 * `omitted_insight_ids`, readable by id and revision) and later, smaller records may still
 * fit. Evidence whose original was deleted is named, never invented, and listed in
 * `unresolved_evidence`.
 */
export interface ContextOptions {
  maxChars: number;
  limit: number;
  offset: number;
}

const SEPARATOR = "\n\n";

export async function renderContext(db: Db, scope: KnowledgeScope, options: ContextOptions) {
  const [rows, totals] = await Promise.all([
    db.$queryRaw<InsightRow[]>`
      SELECT ${INSIGHT_COLUMNS} FROM knowledge_insights i WHERE i.scope_id = ${scope.id}::uuid
      ORDER BY i.updated_at DESC, i.id DESC LIMIT ${options.limit} OFFSET ${options.offset}`,
    db.$queryRaw<{ total: number }[]>`SELECT count(*)::int AS total FROM knowledge_insights WHERE scope_id = ${scope.id}::uuid`,
  ]);
  const total = totals[0]?.total ?? 0;
  const current = rows.map((r) => ({ insightId: r.id, revision: r.revision }));
  const [revisions, evidence] =
    current.length === 0
      ? [[], []]
      : await Promise.all([
          db.knowledgeInsightRevision.findMany({ where: { OR: current } }),
          db.knowledgeRevisionEvidence.findMany({ where: { OR: current }, orderBy: [{ insightId: "asc" }, { position: "asc" }] }),
        ]);
  const snapshots = await loadSnapshots(
    db,
    evidence.map((e) => e.sourceRevisionId),
  );

  const blocks: string[] = [];
  let chars = 0;
  const records: { id: string; revision: number; included: boolean; chars: number }[] = [];
  const omitted: string[] = [];
  const unavailable = new Set<string>();
  const unresolved: { insight_id: string; revision: number; source_revision_id: string; content_id: string; relation: Relation }[] = [];

  for (const row of rows) {
    const rev = revisions.find((r) => r.insightId === row.id && r.revision === row.revision) as RevisionRow | undefined;
    if (!rev) continue;
    const cited = evidence.filter((e) => e.insightId === row.id && e.revision === row.revision) as EvidenceRow[];
    const block = renderRecord(row, rev, cited, snapshots);
    const size = codePointLength(block);
    const needed = size + (blocks.length > 0 ? SEPARATOR.length : 0);
    const included = chars + needed <= options.maxChars;
    records.push({ id: row.id, revision: row.revision, included, chars: size });
    if (!included) {
      omitted.push(row.id);
      continue;
    }
    blocks.push(block);
    chars += needed;
    for (const e of cited) {
      const snapshot = snapshots.get(e.sourceRevisionId);
      if (snapshot && isAvailable(snapshot)) continue;
      unavailable.add(e.sourceRevisionId);
      unresolved.push({
        insight_id: row.id,
        revision: row.revision,
        source_revision_id: e.sourceRevisionId,
        content_id: e.originalId,
        relation: e.relation as Relation,
      });
    }
  }
  const nextOffset = rows.length > 0 && options.offset + rows.length < total ? options.offset + rows.length : null;
  return {
    entity_id: scope.entityId,
    project_id: scope.projectId,
    markdown: blocks.join(SEPARATOR),
    records,
    omitted_insight_ids: omitted,
    unavailable_source_revision_ids: [...unavailable],
    unresolved_evidence: unresolved,
    next_offset: nextOffset,
    bounds: { max_chars: options.maxChars, chars, limit: options.limit, offset: options.offset },
    record_reader: "/agent/v1/knowledge/insights/{insight_id}?revision={revision}",
    complete: nextOffset === null && omitted.length === 0 && unresolved.length === 0,
  };
}

const oneLine = (text: string) => text.replace(/\s+/g, " ").trim();

function renderRecord(row: InsightRow, rev: RevisionRow, evidence: EvidenceRow[], snapshots: Map<string, Snapshot>): string {
  const lines: string[] = [];
  lines.push(`## ${oneLine(rev.title)}`);
  const label = rev.clientLabel ? ` · client ${oneLine(rev.clientLabel)}` : "";
  lines.push(
    `insight ${row.id} · revision ${rev.revision} · ${rev.origin} · ${rev.reviewState} · actor ${rev.actorId}${label} · updated ${rev.createdAt.toISOString()}`,
  );
  if (rev.tags.length > 0) lines.push(`Tags: ${rev.tags.join(", ")}`);
  lines.push("", rev.summary.trim());
  if (rev.reasoning.trim()) lines.push("", `Reasoning: ${rev.reasoning.trim()}`);
  if (rev.limitations.length > 0) {
    lines.push("", "Limitations:");
    for (const limitation of rev.limitations) lines.push(`- ${oneLine(limitation)}`);
  }
  if (evidence.length > 0) {
    lines.push("", "Evidence:");
    for (const e of evidence) {
      const snapshot = snapshots.get(e.sourceRevisionId);
      if (!snapshot || !isAvailable(snapshot)) {
        const gone = unavailableOf(snapshot);
        lines.push(
          `- ${e.relation}: unavailable (the original ${e.originalId} was deleted) · ${[gone.reason, gone.at].filter(Boolean).join(" ")} · source ${e.sourceRevisionId}`,
        );
        continue;
      }
      const about = [snapshot.platform, snapshot.author, snapshot.publishedAt?.toISOString().slice(0, 10), snapshot.url]
        .filter((part): part is string => Boolean(part))
        .map(oneLine);
      lines.push(`- ${e.relation}: ${about.join(" · ")} · source ${e.sourceRevisionId} @ ${e.startOffset}–${e.endOffset}`);
      for (const line of e.quote.split(/\r?\n/)) lines.push(`  > ${line}`);
    }
  }
  return lines.join("\n");
}
