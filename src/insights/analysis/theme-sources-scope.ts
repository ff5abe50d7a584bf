import { type Db, Prisma } from "../../platform/db.js";
import { type AnalysisScope, mergedReads, scopeCondition } from "./scope.js";
import { focusConditionOf, SIDE } from "./scope-counts.js";
import { quoteOf } from "./synthesis.js";
import type { ThemeSide } from "./theme-sources.js";
import type { Unit } from "./units.js";

/**
 * The rest of a theme's sources in a scope larger than the analysed sample (theme-sources-read.ts lists
 * them after the sample's): read when a page reaches them, from the scope's stored units as the analysis
 * counted them, and their best statements for the theme.
 */

/** An insight's row of `analysis_themes`: its count and what the count matched over the scope. */
export interface ThemeRow {
  aspect: string;
  side: ThemeSide;
  focus: string;
  phrases: string[];
  sources: number;
  sample_sources: number;
  entity_ids: string[] | null;
  platforms: string[] | null;
  exclude_first_party: boolean;
  as_of: Date;
  scope_sources: number | null;
}

/** A source of the list before its original is read: from the sample (with its span) or the rest of the scope. */
export interface Listed {
  contentId: string;
  seenAt: Date;
  rank: number | null;
  unitId: string | null;
  start: number | null;
  end: number | null;
}

/** The insight whose sources are read, and where. */
export interface Ref {
  analysisId: string;
  n: number;
  theme: ThemeRow;
  workspaceId: string;
}

/** The condition (over `u`'s aggregate per source) that the source's statements take the theme's side. */
function sideHaving(side: ThemeSide): Prisma.Sql {
  switch (side) {
    case "complaint":
    case "praise":
    case "request":
      return Prisma.sql`bool_or(${SIDE[side]})`;
    case "neutral":
      return Prisma.sql`NOT bool_or((${SIDE.complaint}) OR (${SIDE.praise}) OR (${SIDE.request}))`;
    default:
      return Prisma.sql`TRUE`;
  }
}

/** The scope the theme was counted over, as scope.ts's reads take it. */
const scopeOf = (ref: Ref): AnalysisScope => ({
  workspaceIds: [ref.workspaceId],
  entityIds: ref.theme.entity_ids,
  platforms: ref.theme.platforms,
  excludeFirstParty: ref.theme.exclude_first_party,
  contentIds: null,
  preferFirstParty: false,
  emptyReasons: [],
  describe: {},
});

/**
 * Which way finds the rest of the scope's sources of a theme sooner. Along the units' seen index, newest
 * first, a page reads about limit × (scope ÷ matching) units (index-only, tens of nanoseconds each);
 * by name (opinion_units_names_idx) it reads every matching unit (from the table, a few microseconds each)
 * and sorts them. The matching sources are read from the roll-ups (every side, every source stored now:
 * an upper bound), the scope from what the analysis counted. By name when matching² ≤ 16 × scope (about
 * 12,600 of 10,000,000, 4,000 of 1,000,000) or at most 2,000.
 */
export async function findsByName(db: Db, theme: ThemeRow): Promise<boolean> {
  const [row] = await db.$queryRaw<{ n: bigint | null }[]>`
    SELECT sum(r.sources)::bigint AS n FROM opinion_source_rollups r
    WHERE r.entity_id = ANY(${theme.entity_ids ?? []}::uuid[]) AND r.focus = ${theme.focus} AND r.aspect = ANY(${theme.phrases}::text[])`;
  const matching = Number(row?.n ?? 0);
  const scope = theme.scope_sources ?? 0;
  return matching <= 2_000 || matching * matching <= 16 * scope;
}

/**
 * The rest of the scope's sources of the theme after a position, newest first: the units naming a phrase
 * (on the theme's side and of its focus), grouped per original (all its units share its moment), whose
 * original is in scope, was stored before the analysis ran and is not one of the sample's. Found either
 * per entity along the seen index, in its order, the entities' reads merged and stopped at the limit; or,
 * when few units name the theme (`findsByName`), by name, then sorted.
 */
export async function scopeRest(
  db: Db,
  ref: Ref,
  after: { seenAt: Date; id: string } | null,
  limit: number,
  way?: "seen" | "name",
): Promise<Listed[]> {
  const { theme } = ref;
  const names = theme.phrases;
  const entities = theme.entity_ids ?? [];
  const past = after ? Prisma.sql`AND (u.seen_at, u.content_id) < (${after.seenAt}::timestamptz, ${after.id}::uuid)` : Prisma.empty;
  // Every condition is on the units, so each read is one grouping under its LIMIT: the planner then reads
  // the index in order and stops (a grouping in a subquery under a join is planned for every row).
  const conditions = Prisma.sql`u.seen_at IS NOT NULL ${past}
    AND (u.aspect = ANY(${names}::text[]) OR u.terms && ${names}::text[]) AND ${focusConditionOf(theme.focus)}
    AND EXISTS (SELECT 1 FROM content_store c WHERE c.id = u.content_id AND ${scopeCondition(scopeOf(ref))}
      AND c.created_at <= ${theme.as_of}::timestamptz)
    AND NOT EXISTS (SELECT 1 FROM analysis_theme_sources s WHERE s.analysis_id = ${ref.analysisId}::uuid
      AND s.insight = ${ref.n} AND s.seen_at = u.seen_at AND s.content_id = u.content_id)`;
  const grouped = (where: Prisma.Sql) => Prisma.sql`SELECT u.seen_at, u.content_id FROM opinion_units u
    WHERE ${where} AND ${conditions}
    GROUP BY u.seen_at, u.content_id
    HAVING ${sideHaving(theme.side)}
    ORDER BY u.seen_at DESC, u.content_id DESC LIMIT ${limit}`;
  const read =
    (way ?? ((await findsByName(db, theme)) ? "name" : "seen")) === "name"
      ? grouped(Prisma.sql`opinion_unit_names(u.entity_id, u.aspect, u.terms) && ${entities.flatMap((e) => names.map((n) => `${e}:${n}`))}::text[]
          AND u.entity_id = ANY(${entities}::uuid[])`)
      : mergedReads(
          entities,
          (entity) => grouped(Prisma.sql`u.entity_id = ${entity}::uuid`),
          Prisma.sql`x.seen_at DESC, x.content_id DESC`,
          limit,
        );
  const rows = await db.$queryRaw<{ seen_at: Date; content_id: string }[]>(read);
  return rows.map((r) => ({ contentId: r.content_id, seenAt: r.seen_at, rank: null, unitId: null, start: null, end: null }));
}

/**
 * The best statement of each of the rest of the scope's listed sources: among its units naming one of the
 * phrases (of the focus, on the theme's side when it takes one), the strongest, the earliest on a tie; cut
 * as the insight's quotes are (synthesis.ts `quoteOf`).
 */
export async function withSpans(db: Db, ref: Ref, listed: Listed[]): Promise<Listed[]> {
  const ids = listed.filter((l) => l.start === null).map((l) => l.contentId);
  if (ids.length === 0) return listed;
  const { theme } = ref;
  const onSide = theme.side === "complaint" || theme.side === "praise" || theme.side === "request" ? SIDE[theme.side] : Prisma.sql`TRUE`;
  const units = await db.$queryRaw<{ content_id: string; id: string; start_offset: number; end_offset: number; text: string }[]>`
    SELECT DISTINCT ON (u.content_id) u.content_id, u.id, u.start_offset, u.end_offset, u.text
    FROM opinion_units u
    WHERE u.content_id = ANY(${ids}::uuid[]) AND (u.aspect = ANY(${theme.phrases}::text[]) OR u.terms && ${theme.phrases}::text[])
      AND ${focusConditionOf(theme.focus)} AND ${onSide}
    ORDER BY u.content_id, abs(u.sentiment) DESC, u.start_offset`;
  const spans = new Map(
    units.map((u) => {
      const q = quoteOf({ contentId: u.content_id, id: u.id, start: u.start_offset, end: u.end_offset, text: u.text } as Unit);
      return [u.content_id, { unitId: u.id, start: q.start_offset ?? u.start_offset, end: q.end_offset ?? u.end_offset }];
    }),
  );
  return listed.map((l) => (l.start === null ? { ...l, ...(spans.get(l.contentId) ?? {}) } : l));
}
