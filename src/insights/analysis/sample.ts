import { type Db, Prisma } from "../../platform/db.js";
import type { Focus } from "./focus.js";
import type { RetrievedRow } from "./retrieval.js";
import { type AnalysisScope, scopeCondition } from "./scope.js";

/**
 * Retrieval ranks rows by the question's words, but people name an aspect in many ways
 * ("$10 a month", "too expensive" are about pricing), and a broad question ("What are the
 * biggest complaints?") is about every source. So the retrieved rows are topped up, up to
 * the depth's row limit: for a focused question (focus.ts) first with rows that hold statements
 * of the asked kind (the sources most clearly of the matching feedback kind first), then with rows
 * whose stored opinion units are about an aspect the question names, then with the scope's other
 * rows, most recently published first.
 * Added rows rank after every retrieved row.
 */
type Row = Omit<RetrievedRow, "score" | "via">;

const COLUMNS = Prisma.sql`c.id, c.entity_id AS "entityId", c.platform, c.kind, c.url, c.title, c.author,
  c.published_at AS "publishedAt", c.content, c.feedback_kind AS "feedbackKind",
  c.feedback_kind_confidence AS "feedbackKindConfidence"`;

export async function topUpFromScope(
  db: Db,
  scope: AnalysisScope,
  rows: RetrievedRow[],
  limit: number,
  aspects: string[],
  focus: Focus | null = null,
): Promise<RetrievedRow[]> {
  const out = [...rows];
  const have = () => out.map((r) => r.id);
  const add = (extra: Row[]) => out.push(...extra.map((r) => ({ ...r, score: 0, via: [] })));
  if (out.length < limit && focus && (focus.unitKinds.length > 0 || focus.churn || focus.compared)) {
    // A focused question first takes the scope's sources that hold statements of the asked kind.
    add(
      await db.$queryRaw<Row[]>`
        SELECT ${COLUMNS} FROM content_store c
        WHERE ${scopeCondition(scope)} AND c.id <> ALL(${have()}::uuid[])
          AND (c.feedback_kind = ANY(${focus.feedbackKinds}::text[])
            OR EXISTS (SELECT 1 FROM opinion_units u WHERE u.content_id = c.id
              AND (u.kind = ANY(${focus.unitKinds}::text[]) OR (${focus.churn} AND u.churn) OR (${focus.compared} AND u.compared_with IS NOT NULL))))
        ORDER BY (c.feedback_kind = ANY(${focus.feedbackKinds}::text[])) DESC,
          CASE WHEN c.feedback_kind = ANY(${focus.feedbackKinds}::text[]) THEN c.feedback_kind_confidence END DESC NULLS LAST,
          c.published_at DESC NULLS LAST, c.created_at DESC, c.id
        LIMIT ${limit - out.length}`,
    );
  }
  if (out.length < limit && aspects.length > 0) {
    add(
      await db.$queryRaw<Row[]>`
        SELECT ${COLUMNS} FROM content_store c
        WHERE ${scopeCondition(scope)} AND c.id <> ALL(${have()}::uuid[])
          AND EXISTS (SELECT 1 FROM opinion_units u WHERE u.content_id = c.id AND u.aspect = ANY(${aspects}::text[]))
        ORDER BY c.published_at DESC NULLS LAST, c.created_at DESC, c.id
        LIMIT ${limit - out.length}`,
    );
  }
  if (out.length < limit) {
    add(
      await db.$queryRaw<Row[]>`
        SELECT ${COLUMNS} FROM content_store c
        WHERE ${scopeCondition(scope)} AND c.id <> ALL(${have()}::uuid[])
        ORDER BY c.published_at DESC NULLS LAST, c.created_at DESC, c.id
        LIMIT ${limit - out.length}`,
    );
  }
  return out;
}
