import type { Analysis } from "../../generated/prisma/client.js";
import { type Db, Prisma } from "../../platform/db.js";
import { notFound, ValidationFailed } from "../../platform/errors.js";
import type { InsightItem, ResultData } from "./schemas.js";
import { type AnalysisScope, mergedReads, scopeCondition } from "./scope.js";
import { focusConditionOf, SIDE } from "./scope-counts.js";
import { analysisWorkspace } from "./service.js";
import { quoteOf } from "./synthesis.js";
import type { ThemeSide } from "./theme-sources.js";
import { quotedOnlyBasis, themeCountBasis } from "./theme-sources-basis.js";
import {
  DEFAULT_SOURCES_LIMIT,
  encodeSourcesCursor,
  type SourcesCursor,
  type SourcesQuery,
  type ThemeSourceItem,
  type ThemeSourcesPage,
} from "./theme-sources-schemas.js";
import type { Unit } from "./units.js";

/**
 * Every source behind one insight of an analysis, a page at a time, for a caller already allowed to read
 * the analysis (the route, the share page and the MCP tool check that first).
 *
 * The analysed sample's sources come from `analysis_theme_sources` (written with the result,
 * theme-sources-store.ts). When the insight was counted over a scope larger than the sample, the rest
 * of that scope's sources its count covers are read when a page reaches them: the stored units, per
 * entity of the scope as it was, newest first along opinion_units_entity_seen_idx (entity_id, seen_at,
 * content_id, index-only), whose aspect or terms name one of the theme's phrases on its side (and of the
 * question's focus), of originals in the scope stored before the analysis ran and not in the sample; a
 * page costs what its limit asks, whatever the scope holds. Every original is read as it is now: one
 * deleted or erased since is listed as unavailable (why and when, from its tombstone), without its words.
 */
interface ThemeRow {
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
}

/** A source of the list before its original is read: from the sample (with its span) or the rest of the scope. */
interface Listed {
  contentId: string;
  seenAt: Date;
  rank: number | null;
  unitId: string | null;
  start: number | null;
  end: number | null;
}

/** The insight `n` of the analysis's result (404 when it has none such: not finished, or fewer insights). */
export function insightOf(analysis: Analysis, n: number): InsightItem {
  const data = (analysis.result as { data?: Partial<ResultData> } | null)?.data;
  const insight = Array.isArray(data?.insights) ? data.insights[n - 1] : undefined;
  if (!insight) throw notFound(`Insight ${n} of this analysis`);
  return insight;
}

export async function readThemeSources(db: Db, analysis: Analysis, n: number, query: SourcesQuery): Promise<ThemeSourcesPage> {
  const insight = insightOf(analysis, n);
  const sort = query.sort ?? "representative";
  const limit = query.limit ?? DEFAULT_SOURCES_LIMIT;
  const cursor = query.cursor ?? null;
  const workspaceId = (await analysisWorkspace(db, analysis)) ?? "00000000-0000-0000-0000-000000000000";
  const [theme] = await db.$queryRaw<ThemeRow[]>`
    SELECT aspect, side, focus, phrases, sources, sample_sources, entity_ids, platforms, exclude_first_party, as_of
    FROM analysis_themes WHERE analysis_id = ${analysis.id}::uuid AND insight = ${n}`;
  const head = {
    analysis_id: analysis.id,
    insight: { id: n, title: insight.title, aspect: insight.aspect, polarity: insight.polarity, sources: insight.sources },
    sort,
  };
  if (!theme) return quotedOnly(db, workspaceId, insight, head, limit);

  const lazy = theme.phrases.length > 0 && theme.entity_ids !== null && theme.entity_ids.length > 0;
  const ref = { analysisId: analysis.id, n, theme, workspaceId };
  let listed: Listed[];
  let next: SourcesCursor | null = null;
  if (sort === "newest") {
    if (cursor && cursor.kind !== "newest") throw wrongCursor();
    const after = cursor ? { seenAt: cursor.seenAt, id: cursor.id } : null;
    const merged = [...(await sampleNewest(db, ref, after, limit + 1)), ...(lazy ? await scopeRest(db, ref, after, limit + 1) : [])].sort(
      newestFirst,
    );
    listed = merged.slice(0, limit);
    const last = listed.at(-1);
    if (merged.length > limit && last) next = { kind: "newest", seenAt: last.seenAt, id: last.contentId };
  } else {
    if (cursor?.kind === "newest") throw wrongCursor();
    listed = [];
    if (!cursor || cursor.kind === "sample") {
      const sample = await sampleRanked(db, ref, cursor?.rank ?? 0, limit + 1);
      listed = sample.slice(0, limit);
      const last = listed.at(-1);
      if (sample.length > limit && last) next = { kind: "sample", rank: last.rank as number };
    }
    if (next === null && lazy) {
      const after = cursor?.kind === "scope" ? { seenAt: cursor.seenAt, id: cursor.id } : null;
      const room = limit - listed.length;
      const rest = await scopeRest(db, ref, after, room + 1);
      listed.push(...rest.slice(0, room));
      const last = listed.at(-1);
      if (rest.length > room && last) {
        next = last.rank !== null ? { kind: "sample", rank: last.rank } : { kind: "scope", seenAt: last.seenAt, id: last.contentId };
      }
    }
  }
  const sources = await describe(db, workspaceId, await withSpans(db, ref, listed), evidenceNumbers(insight));
  const unavailable = await unavailableInSample(db, ref);
  return {
    ...head,
    total: theme.sources,
    sample: theme.sample_sources,
    listed: lazy ? null : theme.sample_sources,
    unavailable,
    complete: !lazy,
    count_basis: themeCountBasis(theme, unavailable),
    sources,
    limit,
    has_more: next !== null,
    next_cursor: next ? encodeSourcesCursor(next) : null,
  };
}

const wrongCursor = () =>
  new ValidationFailed([
    {
      loc: ["query", "cursor"],
      msg: "Input should be a next_cursor value from a previous page of this list in the same sort",
      type: "value_error",
    },
  ]);

/** Newest first, ties by content id (the keyset's order: the index's, read backwards). */
const newestFirst = (a: Listed, b: Listed) =>
  b.seenAt.getTime() - a.seenAt.getTime() || (a.contentId < b.contentId ? 1 : a.contentId > b.contentId ? -1 : 0);

interface Ref {
  analysisId: string;
  n: number;
  theme: ThemeRow;
  workspaceId: string;
}

type MemberRow = {
  content_id: string;
  seen_at: Date;
  rank: number;
  opinion_unit_id: string | null;
  start_offset: number;
  end_offset: number;
};
const fromMember = (r: MemberRow): Listed => ({
  contentId: r.content_id,
  seenAt: r.seen_at,
  rank: r.rank,
  unitId: r.opinion_unit_id,
  start: r.start_offset,
  end: r.end_offset,
});

/** The sample's sources after `rank`, most representative first (the primary key's order). */
async function sampleRanked(db: Db, ref: Ref, rank: number, limit: number): Promise<Listed[]> {
  const rows = await db.$queryRaw<MemberRow[]>`
    SELECT content_id, seen_at, rank, opinion_unit_id, start_offset, end_offset FROM analysis_theme_sources
    WHERE analysis_id = ${ref.analysisId}::uuid AND insight = ${ref.n} AND rank > ${rank}
    ORDER BY rank LIMIT ${limit}`;
  return rows.map(fromMember);
}

/** The sample's sources after a position, newest first (analysis_theme_sources_seen_idx, backwards). */
async function sampleNewest(db: Db, ref: Ref, after: { seenAt: Date; id: string } | null, limit: number): Promise<Listed[]> {
  const past = after ? Prisma.sql`AND (seen_at, content_id) < (${after.seenAt}::timestamptz, ${after.id}::uuid)` : Prisma.empty;
  const rows = await db.$queryRaw<MemberRow[]>`
    SELECT content_id, seen_at, rank, opinion_unit_id, start_offset, end_offset FROM analysis_theme_sources
    WHERE analysis_id = ${ref.analysisId}::uuid AND insight = ${ref.n} ${past}
    ORDER BY seen_at DESC, content_id DESC LIMIT ${limit}`;
  return rows.map(fromMember);
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
 * The rest of the scope's sources of the theme after a position, newest first: per entity, the units
 * naming a phrase (in the index's order, grouped per original, which all its units share the moment
 * of), those whose original takes the side, is in scope, was stored before the analysis ran and is
 * not one of the sample's; the entities' reads merged and stopped at the limit.
 */
async function scopeRest(db: Db, ref: Ref, after: { seenAt: Date; id: string } | null, limit: number): Promise<Listed[]> {
  const { theme } = ref;
  const names = theme.phrases;
  const past = after ? Prisma.sql`AND (u.seen_at, u.content_id) < (${after.seenAt}::timestamptz, ${after.id}::uuid)` : Prisma.empty;
  const scope = scopeOf(ref);
  const read = mergedReads(
    theme.entity_ids ?? [],
    (entity) => Prisma.sql`SELECT g.seen_at, g.content_id FROM (
        SELECT u.seen_at, u.content_id FROM opinion_units u
        WHERE u.entity_id = ${entity}::uuid AND u.seen_at IS NOT NULL ${past}
          AND (u.aspect = ANY(${names}::text[]) OR u.terms && ${names}::text[]) AND ${focusConditionOf(theme.focus)}
        GROUP BY u.seen_at, u.content_id
        HAVING ${sideHaving(theme.side)}
        ORDER BY u.seen_at DESC, u.content_id DESC) g
      JOIN content_store c ON c.id = g.content_id
      WHERE ${scopeCondition(scope)} AND c.created_at <= ${theme.as_of}::timestamptz
        AND NOT EXISTS (SELECT 1 FROM analysis_theme_sources s WHERE s.analysis_id = ${ref.analysisId}::uuid
          AND s.insight = ${ref.n} AND s.seen_at = g.seen_at AND s.content_id = g.content_id)
      ORDER BY g.seen_at DESC, g.content_id DESC LIMIT ${limit}`,
    Prisma.sql`x.seen_at DESC, x.content_id DESC`,
    limit,
  );
  const rows = await db.$queryRaw<{ seen_at: Date; content_id: string }[]>(read);
  return rows.map((r) => ({ contentId: r.content_id, seenAt: r.seen_at, rank: null, unitId: null, start: null, end: null }));
}

/** How many of the sample's sources are gone since the analysis ran. */
async function unavailableInSample(db: Db, ref: Ref): Promise<number> {
  const [row] = await db.$queryRaw<{ n: number }[]>`
    SELECT count(*)::int AS n FROM analysis_theme_sources s
    WHERE s.analysis_id = ${ref.analysisId}::uuid AND s.insight = ${ref.n}
      AND NOT EXISTS (SELECT 1 FROM content_store c WHERE c.id = s.content_id AND c.workspace_id = ${ref.workspaceId}::uuid)`;
  return row?.n ?? 0;
}

/** The number of the insight's quote from each source it quotes (its first). */
function evidenceNumbers(insight: InsightItem): Map<string, number> {
  const numbers = new Map<string, number>();
  for (const e of insight.evidence ?? []) if (!numbers.has(e.content_id)) numbers.set(e.content_id, e.number);
  return numbers;
}

/**
 * The best statement of each of the rest of the scope's listed sources: among its units naming one of the
 * phrases (of the focus, on the theme's side when it takes one), the strongest, the earliest on a tie; cut
 * as the insight's quotes are (synthesis.ts `quoteOf`).
 */
async function withSpans(db: Db, ref: Ref, listed: Listed[]): Promise<Listed[]> {
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

type OriginalRow = {
  id: string;
  title: string;
  platform: string;
  author: string;
  published_at: Date | null;
  url: string;
  feedback_kind: string | null;
  quote: string | null;
};

/**
 * The listed sources as they are now: each original's fields and its statement's words (the stored
 * original between the span's code-point offsets), or, for one gone since, why and when from its tombstone.
 */
async function describe(db: Db, workspaceId: string, listed: Listed[], numbers: Map<string, number>): Promise<ThemeSourceItem[]> {
  if (listed.length === 0) return [];
  const ids = listed.map((l) => l.contentId);
  const originals = await db.$queryRaw<OriginalRow[]>`
    SELECT c.id, c.title, c.platform, c.author, c.published_at, c.url, e.feedback_kind,
      CASE WHEN s.start_offset IS NULL THEN NULL ELSE substr(c.content, s.start_offset + 1, s.end_offset - s.start_offset) END AS quote
    FROM unnest(${ids}::uuid[], ${listed.map((l) => l.start)}::int[], ${listed.map((l) => l.end)}::int[]) AS s(id, start_offset, end_offset)
    JOIN content_store c ON c.id = s.id AND c.workspace_id = ${workspaceId}::uuid
    LEFT JOIN content_enrichment e ON e.content_id = c.id`;
  const byId = new Map(originals.map((o) => [o.id, o]));
  const gone = ids.filter((id) => !byId.has(id));
  const tombstones =
    gone.length === 0
      ? []
      : await db.$queryRaw<{ content_id: string; platform: string; reason: string; deleted_at: Date }[]>`
          SELECT content_id, platform, reason, deleted_at FROM content_deletions WHERE content_id = ANY(${gone}::uuid[])`;
  const tombstoneOf = new Map(tombstones.map((t) => [t.content_id, t]));
  const now = new Date().toISOString();
  return listed.map((l): ThemeSourceItem => {
    const original = byId.get(l.contentId);
    const common = {
      content_id: l.contentId,
      start_offset: l.start ?? 0,
      end_offset: l.end ?? 0,
      in_sample: l.rank !== null,
      evidence_number: numbers.get(l.contentId) ?? null,
    };
    if (!original) {
      const t = tombstoneOf.get(l.contentId);
      return {
        ...common,
        title: "",
        platform: t?.platform ?? "",
        author: "",
        published_at: null,
        url: "",
        feedback_kind: null,
        quote: "",
        opinion_unit_id: null,
        unavailable: { reason: (t?.reason ?? "deleted") as Reason, at: t?.deleted_at.toISOString() ?? now },
      };
    }
    return {
      ...common,
      title: original.title,
      platform: original.platform,
      author: original.author,
      published_at: original.published_at?.toISOString() ?? null,
      url: original.url,
      feedback_kind: original.feedback_kind,
      quote: original.quote ?? "",
      opinion_unit_id: l.unitId,
    };
  });
}

type Reason = NonNullable<ThemeSourceItem["unavailable"]>["reason"];

/**
 * An insight of an analysis stored before its sources were recorded: the sources it quotes, in its order,
 * with their quotes' spans; one page, said to be incomplete.
 */
async function quotedOnly(
  db: Db,
  workspaceId: string,
  insight: InsightItem,
  head: Pick<ThemeSourcesPage, "analysis_id" | "insight" | "sort">,
  limit: number,
): Promise<ThemeSourcesPage> {
  const seen = new Set<string>();
  const listed: Listed[] = [];
  for (const e of insight.evidence ?? []) {
    if (seen.has(e.content_id)) continue;
    seen.add(e.content_id);
    listed.push({
      contentId: e.content_id,
      seenAt: new Date(0),
      rank: listed.length + 1,
      unitId: e.opinion_unit_id,
      start: e.start_offset,
      end: e.end_offset,
    });
  }
  const sources = await describe(db, workspaceId, listed.slice(0, limit), evidenceNumbers(insight));
  const unavailable = sources.filter((s) => s.unavailable).length;
  return {
    ...head,
    total: insight.sources,
    sample: listed.length,
    listed: listed.length,
    unavailable,
    complete: listed.length === insight.sources,
    count_basis: quotedOnlyBasis(listed.length, insight.sources),
    sources,
    limit,
    has_more: false,
    next_cursor: null,
  };
}
