import type { Analysis } from "../../generated/prisma/client.js";
import { type Db, Prisma } from "../../platform/db.js";
import { notFound, ValidationFailed } from "../../platform/errors.js";
import type { InsightItem, ResultData } from "./schemas.js";
import { analysisWorkspace } from "./service.js";
import { quotedOnlyBasis, themeCountBasis } from "./theme-sources-basis.js";
import { describe, evidenceNumbers } from "./theme-sources-originals.js";
import {
  DEFAULT_SOURCES_LIMIT,
  encodeSourcesCursor,
  type SourcesCursor,
  type SourcesQuery,
  type ThemeSourcesPage,
} from "./theme-sources-schemas.js";
import { type Listed, type Ref, scopeRest, type ThemeRow, withSpans } from "./theme-sources-scope.js";

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
  // An analysis of no workspace read nothing, so none of its sources can be read (the nil uuid matches no original).
  const workspaceId = (await analysisWorkspace(db, analysis)) ?? "00000000-0000-0000-0000-000000000000";
  const [theme] = await db.$queryRaw<ThemeRow[]>`
    SELECT aspect, side, focus, phrases, sources, sample_sources, entity_ids, platforms, exclude_first_party, as_of, scope_sources
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

/** How many of the sample's sources are gone since the analysis ran. */
async function unavailableInSample(db: Db, ref: Ref): Promise<number> {
  const [row] = await db.$queryRaw<{ n: number }[]>`
    SELECT count(*)::int AS n FROM analysis_theme_sources s
    WHERE s.analysis_id = ${ref.analysisId}::uuid AND s.insight = ${ref.n}
      AND NOT EXISTS (SELECT 1 FROM content_store c WHERE c.id = s.content_id AND c.workspace_id = ${ref.workspaceId}::uuid)`;
  return row?.n ?? 0;
}

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
