import { type Db, Prisma } from "../../platform/db.js";
import type { Focus } from "./focus.js";
import type { RetrievedRow } from "./retrieval.js";
import { type AnalysisScope, entitiesInScope, mergedReads, scopeCondition } from "./scope.js";

/**
 * Retrieval ranks rows by the question's words, but people name an aspect in many ways
 * ("$10 a month", "too expensive" are about pricing), and a broad question ("What are the
 * biggest complaints?") is about every source. So the retrieved rows are topped up, up to
 * the depth's row limit: for a focused question (focus.ts) first with the sources enrichment
 * read as of the matching feedback kind, most surely so first, then with sources holding
 * statements of the asked kind; then with sources whose stored opinion units are about an aspect
 * the question names; then with the scope's other rows, most recently seen (published, else
 * stored) first. Added rows rank after every retrieved row.
 *
 * Every read follows an index in its order for each entity of the scope, the entities' reads merged
 * (mergedReads) and stopped at what the tier needs, so the cost does not grow with the scope (ten
 * million originals read like ten thousand): the sources of a kind along content_enrichment_entity_kind_sure_idx,
 * the recent ones along content_store_entity_seen_idx, and statements among the scope's newest UNIT_WINDOW
 * opinion units (opinion_units_entity_seen_idx). The counts an analysis reports are over the whole scope in
 * any case (scope-counts.ts); this only picks what it reads and quotes.
 */
type Row = Omit<RetrievedRow, "score" | "via">;

/** The scope's most recent opinion units that a statement tier looks among. */
export const UNIT_WINDOW = 200_000;

/** What is read of a row (`c`) and its enrichment (`e`, joined by WITH_KIND). */
const COLUMNS = Prisma.sql`c.id, c.entity_id AS "entityId", c.platform, c.kind, c.url, c.title, c.author,
  c.published_at AS "publishedAt", c.content, e.feedback_kind AS "feedbackKind",
  e.feedback_kind_confidence AS "feedbackKindConfidence"`;
const WITH_KIND = Prisma.sql`LEFT JOIN content_enrichment e ON e.content_id = c.id`;

/** Sources of the scope whose statements among its newest UNIT_WINDOW units match `match` (over `u`), newest first. */
function bySeenStatements(scope: AnalysisScope, entityIds: string[], have: string[], match: Prisma.Sql, limit: number) {
  // The walk reads the index alone: kind, aspect, churn and compared_with are in its INCLUDE (migration 20261130130000).
  const units = mergedReads(
    entityIds,
    (entity) => Prisma.sql`SELECT u.content_id, u.seen_at, u.kind, u.aspect, u.churn, u.compared_with FROM opinion_units u
      WHERE u.entity_id = ${entity}::uuid AND u.seen_at IS NOT NULL
      ORDER BY u.seen_at DESC LIMIT ${UNIT_WINDOW}`,
    Prisma.sql`x.seen_at DESC`,
    UNIT_WINDOW,
  );
  return Prisma.sql`
    SELECT ${COLUMNS} FROM (
      SELECT u.content_id, max(u.seen_at) AS seen FROM (${units}) u
      WHERE ${match}
      GROUP BY u.content_id) m
    JOIN content_store c ON c.id = m.content_id ${WITH_KIND}
    WHERE ${scopeCondition(scope)} AND c.id <> ALL(${have}::uuid[])
    ORDER BY m.seen DESC, c.id DESC
    LIMIT ${limit}`;
}

export async function topUpFromScope(
  db: Db,
  scope: AnalysisScope,
  rows: RetrievedRow[],
  limit: number,
  aspects: string[],
  focus: Focus | null = null,
): Promise<RetrievedRow[]> {
  const out = [...rows];
  if (out.length >= limit) return out;
  const entityIds = await entitiesInScope(db, scope);
  if (entityIds.length === 0) return out;
  const have = () => out.map((r) => r.id);
  const add = (extra: Row[]) => out.push(...extra.map((r) => ({ ...r, score: 0, via: [] })));
  const wanted = () => limit - out.length;
  if (wanted() > 0 && focus && focus.feedbackKinds.length > 0) {
    // Per entity and kind, along content_enrichment (entity_id, feedback_kind, confidence desc, created_at desc, content_id desc).
    const skip = have();
    const sure = mergedReads(
      entityIds.flatMap((entity) => focus.feedbackKinds.map((kind) => ({ entity, kind }))),
      ({ entity, kind }) => Prisma.sql`SELECT e.content_id AS id, e.feedback_kind_confidence AS sure, e.created_at AS stored_at
        FROM content_enrichment e JOIN content_store c ON c.id = e.content_id
        WHERE e.entity_id = ${entity}::uuid AND e.feedback_kind = ${kind} AND ${scopeCondition(scope)}
        ORDER BY e.feedback_kind_confidence DESC NULLS LAST, e.created_at DESC, e.content_id DESC
        LIMIT ${wanted() + skip.length}`,
      Prisma.sql`x.sure DESC NULLS LAST, x.stored_at DESC, x.id DESC`,
      wanted() + skip.length,
    );
    add(
      await db.$queryRaw<Row[]>`
        SELECT ${COLUMNS} FROM (${sure}) s JOIN content_store c ON c.id = s.id ${WITH_KIND}
        WHERE c.id <> ALL(${skip}::uuid[])
        ORDER BY s.sure DESC NULLS LAST, s.stored_at DESC, s.id DESC
        LIMIT ${wanted()}`,
    );
  }
  if (wanted() > 0 && focus && (focus.unitKinds.length > 0 || focus.churn || focus.compared)) {
    const match = Prisma.sql`(u.kind = ANY(${focus.unitKinds}::text[])
      ${focus.churn ? Prisma.sql`OR u.churn` : Prisma.empty}
      ${focus.compared ? Prisma.sql`OR u.compared_with IS NOT NULL` : Prisma.empty})`;
    add(await db.$queryRaw<Row[]>(bySeenStatements(scope, entityIds, have(), match, wanted())));
  }
  if (wanted() > 0 && aspects.length > 0) {
    add(await db.$queryRaw<Row[]>(bySeenStatements(scope, entityIds, have(), Prisma.sql`u.aspect = ANY(${aspects}::text[])`, wanted())));
  }
  if (wanted() > 0) {
    // Newest seen first, along each entity's content_store_entity_seen_idx.
    const skip = have();
    const recent = mergedReads(
      entityIds,
      (entity) => Prisma.sql`SELECT c.id, coalesce(c.published_at, c.created_at) AS seen FROM content_store c
        WHERE c.entity_id = ${entity}::uuid AND ${scopeCondition(scope)}
        ORDER BY coalesce(c.published_at, c.created_at) DESC, c.id DESC
        LIMIT ${wanted() + skip.length}`,
      Prisma.sql`x.seen DESC, x.id DESC`,
      wanted() + skip.length,
    );
    add(
      await db.$queryRaw<Row[]>`
        SELECT ${COLUMNS} FROM (${recent}) s JOIN content_store c ON c.id = s.id ${WITH_KIND}
        WHERE c.id <> ALL(${skip}::uuid[])
        ORDER BY s.seen DESC, s.id DESC
        LIMIT ${wanted()}`,
    );
  }
  return out;
}
