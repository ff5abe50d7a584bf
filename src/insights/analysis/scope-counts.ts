import { type Db, Prisma } from "../../platform/db.js";
import type { Focus } from "./focus.js";
import { type AnalysisScope, coversWholeEntities, scopeCondition, scopeEntities } from "./scope.js";
import type { Theme } from "./themes.js";

/**
 * Counts over everything in scope. A theme is found in the analysed sample (at most the depth's rows);
 * its count of sources is then taken over every stored, enriched original in the analysis's scope
 * from the stored opinion units: the distinct sources with a unit about the theme's aspect (its aspect
 * or one of its terms) on each side, of the asked kind for a focused question. A theme whose aspect
 * the stored units cannot name (a request theme named after the capability asked for) has no such count.
 *
 * A scope of whole entities (the default: an entity, a project's or a workspace's, every platform) is
 * answered from `opinion_source_rollups` (migration 20261129110000): per entity, focus and aspect, the
 * sources of each combination of sides, kept exact by triggers on the units, so the count is an index
 * range per entity and aspect whatever the number of originals (2.6 ms against 3.8–5.1 s for one
 * entity of 1,000,000 originals; docs/benchmarks.md). A scope narrowed to platforms reads the units:
 * one statement, one pass over the scope's units for all themes: each unit is matched against every
 * asked aspect at once (its aspect and its terms, unnested), its sides are combined per (source, aspect)
 * and the sources counted per aspect, so the cost grows with the scope, not with the number of themes.
 * Themes that share an aspect (its complaints and its praise) share its count. Both sides of the join
 * are read index-only (content_store_evidence_scope_idx, opinion_units_content_sides_idx; migration
 * 20261127120000_scope_count_indexes), the units in source order: the plan merge-joins them, sorting
 * only the scope's original ids, and holds no large hash table.
 */
export const SIDE = {
  complaint: Prisma.sql`u.kind <> 'request' AND (u.kind = 'bug' OR u.sentiment_label = 'negative')`,
  praise: Prisma.sql`u.kind NOT IN ('request', 'bug') AND u.sentiment_label = 'positive'`,
  request: Prisma.sql`u.kind = 'request'`,
};

/** The units a question of this focus counts (over `u`), by the focus's name in the roll-ups (`rollupFocus`). */
export function focusConditionOf(ask: string): Prisma.Sql {
  switch (ask) {
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

const focusCondition = (focus: Focus | null) => focusConditionOf(rollupFocus(focus));

/** A theme's distinct sources on every side, in scope. */
export type ScopeCounts = Theme["counts"];

/**
 * Distinct sources in scope on every side of each theme's aspect (by theme index); themes the stored
 * units cannot name are absent, and so are themes no stored unit in scope is about. A source counts as
 * neutral only when it takes no side on the aspect.
 */
export async function scopeCounts(
  db: Db,
  scope: AnalysisScope,
  themes: Theme[],
  focus: Focus | null,
  unnamed: ReadonlySet<string>,
): Promise<Map<number, ScopeCounts>> {
  // A topic is counted under each of its phrases that stored units name, taking the largest: exact for a
  // topic of one phrase, a floor for one of several (a source may use two of them).
  const countable = themes.flatMap((t, i) => {
    const names = (t.phrases ?? [t.aspect]).filter((n) => !unnamed.has(n));
    return names.length === 0 ? [] : [{ i, names }];
  });
  if (countable.length === 0 || scope.contentIds) return new Map();
  const aspects = [...new Set(countable.flatMap((t) => t.names))];
  // The roll-ups hold every platform of an entity together: a scope narrowed to platforms reads the units.
  const rows = coversWholeEntities(scope) ? await fromRollups(db, scope, aspects, focus) : await fromUnits(db, scope, aspects, focus);
  const byAspect = new Map(
    rows.map((r) => [
      r.aspect,
      { complaint: Number(r.complaint), praise: Number(r.praise), request: Number(r.request), neutral: Number(r.neutral) },
    ]),
  );
  const counted = new Map<number, ScopeCounts>();
  for (const { i, names } of countable) {
    const all = names.map((n) => byAspect.get(n)).filter((c): c is ScopeCounts => c !== undefined);
    if (all.length === 0) continue;
    const most = (side: keyof ScopeCounts) => Math.max(...all.map((c) => c[side]));
    counted.set(i, { complaint: most("complaint"), praise: most("praise"), request: most("request"), neutral: most("neutral") });
  }
  return counted;
}

type CountRow = { aspect: string; complaint: bigint; praise: bigint; request: bigint; neutral: bigint };

/** The focus a question counts under in `opinion_source_rollups` ('' for every unit). */
export function rollupFocus(focus: Focus | null): string {
  switch (focus?.ask) {
    case "requests":
    case "bugs":
    case "churn":
    case "comparison":
      return focus.ask;
    default:
      return "";
  }
}

/**
 * From `opinion_source_rollups` (migration 20261129110000), kept by triggers on the units: the sources
 * of each combination of sides per aspect, summed over the scope's entities. An index range per entity
 * and aspect, whatever the number of originals.
 */
function fromRollups(db: Db, scope: AnalysisScope, aspects: string[], focus: Focus | null): Promise<CountRow[]> {
  return db.$queryRaw<CountRow[]>`
    SELECT r.aspect, coalesce(sum(r.sources) FILTER (WHERE r.sides & 1 <> 0), 0)::bigint AS complaint,
      coalesce(sum(r.sources) FILTER (WHERE r.sides & 2 <> 0), 0)::bigint AS praise,
      coalesce(sum(r.sources) FILTER (WHERE r.sides & 4 <> 0), 0)::bigint AS request,
      coalesce(sum(r.sources) FILTER (WHERE r.sides = 0), 0)::bigint AS neutral
    FROM opinion_source_rollups r
    WHERE r.entity_id IN (${scopeEntities(scope)}) AND r.focus = ${rollupFocus(focus)} AND r.aspect = ANY(${aspects}::text[])
    GROUP BY r.aspect
    HAVING sum(r.sources) > 0`;
}

/** From the scope's units, read once (any scope). */
function fromUnits(db: Db, scope: AnalysisScope, aspects: string[], focus: Focus | null): Promise<CountRow[]> {
  return db.$queryRaw<CountRow[]>`
    SELECT s.aspect, count(*) FILTER (WHERE s.complaint) AS complaint, count(*) FILTER (WHERE s.praise) AS praise,
      count(*) FILTER (WHERE s.request) AS request, count(*) FILTER (WHERE NOT (s.complaint OR s.praise OR s.request)) AS neutral
    FROM (SELECT u.content_id, n.aspect, bool_or(${SIDE.complaint}) AS complaint, bool_or(${SIDE.praise}) AS praise,
            bool_or(${SIDE.request}) AS request
          FROM content_store c JOIN opinion_units u ON u.content_id = c.id
            CROSS JOIN LATERAL unnest(array_prepend(u.aspect, u.terms)) AS n(aspect)
          WHERE ${scopeCondition(scope)} AND ${focusCondition(focus)}
            AND (u.aspect = ANY(${aspects}::text[]) OR u.terms && ${aspects}::text[]) AND n.aspect = ANY(${aspects}::text[])
          GROUP BY u.content_id, n.aspect) s
    GROUP BY s.aspect`;
}
