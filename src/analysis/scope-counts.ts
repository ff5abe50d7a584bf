import { type Db, Prisma } from "../platform/db.js";
import type { Focus } from "./focus.js";
import { type AnalysisScope, scopeCondition } from "./scope.js";
import type { Theme } from "./themes.js";

/**
 * Counts over everything in scope. A theme is found in the analysed sample (at most the depth's rows);
 * its count of sources is then taken over every stored, enriched original in the analysis's scope
 * from the stored opinion units: the distinct sources with a unit about the theme's aspect (its aspect
 * or one of its terms) on the theme's side, and of the asked kind for a focused question. One
 * statement for all themes. A theme whose aspect the stored units cannot name (a request theme named
 * after the capability asked for) has no such count.
 */
const SIDE: Record<Theme["polarity"], Prisma.Sql> = {
  complaint: Prisma.sql`u.kind <> 'request' AND (u.kind = 'bug' OR u.sentiment_label = 'negative')`,
  praise: Prisma.sql`u.kind NOT IN ('request', 'bug') AND u.sentiment_label = 'positive'`,
  request: Prisma.sql`u.kind = 'request'`,
  neutral: Prisma.sql`u.kind NOT IN ('request', 'bug') AND u.sentiment_label = 'neutral'`,
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

/** Distinct sources in scope for each theme (by index); themes the stored units cannot name are absent. */
export async function scopeCounts(
  db: Db,
  scope: AnalysisScope,
  themes: Theme[],
  focus: Focus | null,
  unnamed: ReadonlySet<string>,
): Promise<Map<number, number>> {
  const countable = themes.flatMap((t, i) => (unnamed.has(t.aspect) ? [] : [{ i, t }]));
  if (countable.length === 0 || scope.contentIds) return new Map();
  const branches = countable.map(
    ({ i, t }) => Prisma.sql`SELECT ${i}::int AS i, u.content_id FROM opinion_units u JOIN content_store c ON c.id = u.content_id
      WHERE ${scopeCondition(scope)} AND (u.aspect = ${t.aspect} OR ${t.aspect} = ANY(u.terms)) AND ${SIDE[t.polarity]} AND ${focusCondition(focus)}`,
  );
  const rows = await db.$queryRaw<{ i: number; n: bigint }[]>`
    SELECT x.i, count(DISTINCT x.content_id) AS n FROM (${Prisma.join(branches, " UNION ALL ")}) x GROUP BY x.i`;
  return new Map(rows.map((r) => [Number(r.i), Number(r.n)]));
}
