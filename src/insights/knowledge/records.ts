import { isUuid } from "../../access/workspaces/access.js";
import { type Db, type DbTx, Prisma } from "../../platform/db.js";
import { notFound } from "../../platform/errors.js";
import { sliceSpan } from "./quotes.js";
import type { EvidenceRecord, InsightRecord, InsightSummary, ListQuery, Origin, Relation, ResolvedEvidence } from "./schemas.js";
import type { KnowledgeScope } from "./scope.js";
import { allowedRelations, isAvailable, loadSnapshots, type Snapshot, toSourceSummary, unavailableOf } from "./sources.js";

/**
 * Read models of knowledge records: the record at a revision (current or historical) with
 * the evidence that revision had, resolved against the snapshots it cited.
 */
export interface InsightRow {
  id: string;
  workspaceId: string;
  entityId: string | null;
  projectId: string | null;
  scopeId: string;
  revision: number;
  title: string;
  origin: string;
  agentRevised: boolean;
  generatorKey: string | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface RevisionRow {
  insightId: string;
  revision: number;
  title: string;
  summary: string;
  reasoning: string;
  limitations: string[];
  tags: string[];
  origin: string;
  actorId: string;
  clientLabel: string | null;
  reviewState: string;
  analysisId: string | null;
  changeSeq: bigint;
  createdAt: Date;
}

export interface EvidenceRow {
  position: number;
  sourceRevisionId: string;
  originalId: string;
  quote: string;
  relation: string;
  startOffset: number;
  endOffset: number;
}

export const INSIGHT_COLUMNS = Prisma.sql`i.id, i.workspace_id AS "workspaceId", i.entity_id AS "entityId",
  i.project_id AS "projectId", i.scope_id AS "scopeId", i.revision, i.title, i.origin, i.agent_revised AS "agentRevised",
  i.generator_key AS "generatorKey", i.created_at AS "createdAt", i.updated_at AS "updatedAt"`;

/** The record in the scope, or 404 (also for a record of another scope the caller can see). */
export async function insightInScope(db: Db | DbTx, scope: KnowledgeScope, insightId: string, lock = false): Promise<InsightRow> {
  if (!isUuid(insightId)) throw notFound("Insight");
  const rows = await db.$queryRaw<InsightRow[]>`
    SELECT ${INSIGHT_COLUMNS} FROM knowledge_insights i WHERE i.id = ${insightId}::uuid AND i.scope_id = ${scope.id}::uuid
    ${lock ? Prisma.sql`FOR UPDATE` : Prisma.empty}`;
  const row = rows[0];
  if (!row) throw notFound("Insight");
  return row;
}

export async function loadRevision(db: Db | DbTx, insightId: string, revision: number) {
  const [revisionRow, evidence] = await Promise.all([
    db.knowledgeInsightRevision.findUnique({ where: { insightId_revision: { insightId, revision } } }),
    db.knowledgeRevisionEvidence.findMany({ where: { insightId, revision }, orderBy: { position: "asc" } }),
  ]);
  return revisionRow ? { revision: revisionRow as RevisionRow, evidence: evidence as EvidenceRow[] } : null;
}

export function toEvidenceRecord(e: EvidenceRow): EvidenceRecord {
  return {
    source_revision_id: e.sourceRevisionId,
    content_id: e.originalId,
    quote: e.quote,
    relation: e.relation as Relation,
    start: e.startOffset,
    end: e.endOffset,
  };
}

export function toRecord(insight: InsightRow, rev: RevisionRow, evidence: EvidenceRow[]): InsightRecord {
  return {
    id: insight.id,
    entity_id: insight.entityId,
    project_id: insight.projectId,
    revision: rev.revision,
    title: rev.title,
    summary: rev.summary,
    reasoning: rev.reasoning,
    limitations: rev.limitations,
    tags: rev.tags,
    evidence: evidence.map(toEvidenceRecord),
    origin: rev.origin as Origin,
    actor_id: rev.actorId,
    client_label: rev.clientLabel,
    review_state: rev.reviewState,
    analysis_id: rev.analysisId,
    created_at: insight.createdAt.toISOString(),
    updated_at: rev.createdAt.toISOString(),
  };
}

/**
 * Each cited quote with the span of its snapshot's text, or unavailable when the original is gone:
 * then its quote is empty (cleared when the original was deleted) and `unavailable` says why and when.
 */
export function resolveEvidence(evidence: EvidenceRow[], snapshots: Map<string, Snapshot>): ResolvedEvidence[] {
  return evidence.map((e) => {
    const snapshot = snapshots.get(e.sourceRevisionId);
    const available = snapshot !== undefined && isAvailable(snapshot);
    const kind = snapshot?.textKind ?? "original";
    const span = { start: e.startOffset, end: e.endOffset };
    const text = available && snapshot?.text ? sliceSpan(snapshot.text, span) : null;
    return {
      ...toEvidenceRecord(e),
      position: e.position,
      available,
      source_text_kind: kind,
      allowed_relations: allowedRelations(kind),
      span: text === null ? null : { ...span, text },
      ...(available ? {} : { unavailable: unavailableOf(snapshot) }),
    };
  });
}

/** The record (current, or `revision`), its sources and resolved evidence. */
export async function readInsight(
  db: Db,
  scope: KnowledgeScope,
  insightId: string,
  options: { revision?: number | undefined; includeEvidence: boolean },
) {
  const insight = await insightInScope(db, scope, insightId);
  const revision = options.revision ?? insight.revision;
  const loaded = revision <= insight.revision ? await loadRevision(db, insight.id, revision) : null;
  if (!loaded) throw notFound(`Revision ${revision} of the insight`);
  const record = toRecord(insight, loaded.revision, loaded.evidence);
  const snapshots = await loadSnapshots(
    db,
    loaded.evidence.map((e) => e.sourceRevisionId),
  );
  const unavailable = [...new Set(loaded.evidence.map((e) => e.sourceRevisionId))].filter((id) => {
    const s = snapshots.get(id);
    return !s || !isAvailable(s);
  });
  if (!options.includeEvidence) {
    return { record, current_revision: insight.revision, unavailable_source_ids: unavailable };
  }
  const cited = [...new Set(loaded.evidence.map((e) => e.sourceRevisionId))];
  return {
    record,
    current_revision: insight.revision,
    sources: cited.flatMap((id) => {
      const s = snapshots.get(id);
      return s ? [toSourceSummary(s)] : [];
    }),
    resolved_evidence: resolveEvidence(loaded.evidence, snapshots),
    unavailable_source_ids: unavailable,
  };
}

const SORTS = {
  updated_at: Prisma.sql`i.updated_at`,
  created_at: Prisma.sql`i.created_at`,
  title: Prisma.sql`lower(i.title)`,
} as const;

/** Current records of the scope, filtered by a literal title substring and a tag. */
export async function listInsights(db: Db, scope: KnowledgeScope, q: ListQuery) {
  const filters: Prisma.Sql[] = [Prisma.sql`i.scope_id = ${scope.id}::uuid`];
  if (q.query) filters.push(Prisma.sql`strpos(lower(i.title), lower(${q.query})) > 0`);
  if (q.tag) filters.push(Prisma.sql`${q.tag} = ANY(i.tags)`);
  const where = Prisma.join(filters, " AND ");
  const direction = q.order === "asc" ? Prisma.sql`ASC` : Prisma.sql`DESC`;
  const [rows, totals] = await Promise.all([
    db.$queryRaw<InsightRow[]>`
      SELECT ${INSIGHT_COLUMNS} FROM knowledge_insights i
      WHERE ${where}
      ORDER BY ${SORTS[q.sort]} ${direction}, i.id ${direction}
      LIMIT ${q.limit} OFFSET ${q.offset}`,
    db.$queryRaw<{ total: number }[]>`SELECT count(*)::int AS total FROM knowledge_insights i WHERE ${where}`,
  ]);
  const total = totals[0]?.total ?? 0;
  const current = rows.map((r) => ({ insightId: r.id, revision: r.revision }));
  const [revisions, counts] =
    current.length === 0
      ? [[], []]
      : await Promise.all([
          db.knowledgeInsightRevision.findMany({ where: { OR: current } }),
          db.knowledgeRevisionEvidence.groupBy({ by: ["insightId", "revision"], where: { OR: current }, _count: { _all: true } }),
        ]);
  const key = (id: string, revision: number) => `${id}:${revision}`;
  const revisionOf = new Map(revisions.map((r) => [key(r.insightId, r.revision), r as RevisionRow]));
  const countOf = new Map(counts.map((c) => [key(c.insightId, c.revision), c._count._all]));
  const insights: InsightSummary[] = rows.flatMap((row) => {
    const rev = revisionOf.get(key(row.id, row.revision));
    if (!rev) return [];
    const { evidence: _none, ...record } = toRecord(row, rev, []);
    return [{ ...record, evidence_count: countOf.get(key(row.id, row.revision)) ?? 0 }];
  });
  return {
    insights,
    count: insights.length,
    total,
    limit: q.limit,
    offset: q.offset,
    next_offset: insights.length > 0 && q.offset + insights.length < total ? q.offset + insights.length : null,
  };
}
