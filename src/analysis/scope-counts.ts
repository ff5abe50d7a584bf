import { type Db, Prisma } from "../platform/db.js";
import type { Focus } from "./focus.js";
import { type AnalysisScope, scopeCondition } from "./scope.js";
import type { Theme } from "./themes.js";

/**
 * Counts over everything in scope. A theme is found in the analysed sample (at most the depth's rows);
 * its count of sources is then taken over every stored, enriched original in the analysis's scope
 * from the stored opinion units: the distinct sources with a unit about the theme's aspect (its aspect
 * or one of its terms) on each side, of the asked kind for a focused question. One statement for all
 * themes. A theme whose aspect the stored units cannot name (a request theme named
 * after the capability asked for) has no such count.
 */
const SIDE = {
  complaint: Prisma.sql`u.kind <> 'request' AND (u.kind = 'bug' OR u.sentiment_label = 'negative')`,
  praise: Prisma.sql`u.kind NOT IN ('request', 'bug') AND u.sentiment_label = 'positive'`,
  request: Prisma.sql`u.kind = 'request'`,
};

function focusCondition(focus: Focus | null): Prisma.Sql {
  if (!focus) return Prisma.sql`TRUE`;
  switch (focus.ask) {
    case "requests":
      return Prisma.sql`u.kind = 'request'`;
    case "bugs":
      return Prisma.sql`u.kind = 'bug'`;
    case "churn":
      return Prisma.sql`(u.churn OR (u.compared_with IS NOT NULL AND u.sentiment_label = 'negative'))`;
    case "comparison":
      return Prisma.sql`u.compared_with IS NOT NULL`;
    default:
      return Prisma.sql`TRUE`;
  }
}

/** A theme's distinct sources on every side, in scope. */
export type ScopeCounts = Theme["counts"];

/**
 * Distinct sources in scope on every side of each theme's aspect (by theme index); themes the stored
 * units cannot name are absent. A source counts as neutral only when it takes no side on the aspect.
 */
export async function scopeCounts(
  db: Db,
  scope: AnalysisScope,
  themes: Theme[],
  focus: Focus | null,
  unnamed: ReadonlySet<string>,
): Promise<Map<number, ScopeCounts>> {
  const countable = themes.flatMap((t, i) => (unnamed.has(t.aspect) ? [] : [{ i, t }]));
  if (countable.length === 0 || scope.contentIds) return new Map();
  const branches = countable.map(
    ({ i, t }) => Prisma.sql`SELECT ${i}::int AS i, u.content_id,
        (${SIDE.complaint}) AS complaint, (${SIDE.praise}) AS praise, (${SIDE.request}) AS request
      FROM opinion_units u JOIN content_store c ON c.id = u.content_id
      WHERE ${scopeCondition(scope)} AND (u.aspect = ${t.aspect} OR ${t.aspect} = ANY(u.terms)) AND ${focusCondition(focus)}`,
  );
  const rows = await db.$queryRaw<{ i: number; complaint: bigint; praise: bigint; request: bigint; neutral: bigint }[]>`
    SELECT s.i, count(*) FILTER (WHERE s.complaint) AS complaint, count(*) FILTER (WHERE s.praise) AS praise,
      count(*) FILTER (WHERE s.request) AS request, count(*) FILTER (WHERE NOT (s.complaint OR s.praise OR s.request)) AS neutral
    FROM (SELECT x.i, x.content_id, bool_or(x.complaint) AS complaint, bool_or(x.praise) AS praise, bool_or(x.request) AS request
          FROM (${Prisma.join(branches, " UNION ALL ")}) x GROUP BY x.i, x.content_id) s
    GROUP BY s.i`;
  return new Map(
    rows.map((r) => [
      Number(r.i),
      { complaint: Number(r.complaint), praise: Number(r.praise), request: Number(r.request), neutral: Number(r.neutral) },
    ]),
  );
}
