import type { InsightItem } from "./schemas.js";
import { quoteOf } from "./synthesis.js";
import type { Theme, ThemePolarity } from "./themes.js";
import type { Unit } from "./units.js";

/**
 * Every source behind each insight (pure): what the runner stores beside the result so that
 * `GET /agent/v1/analysis/{id}/insights/{n}/sources` lists them (theme-sources-store.ts writes,
 * theme-sources-read.ts reads).
 *
 * A theme's count is the distinct sources of its statements in the analysed sample, or, when the scope
 * held more stored originals than the sample, the larger of that and its count over the scope
 * (scope-counts.ts: the sources whose stored units name one of the topic's phrases on the theme's side).
 * So each insight keeps its sample sources, ranked, each with the span of its best statement for the
 * theme; and, when it was counted over the scope, what that count matched (phrases, side, focus), so the
 * rest of the scope's sources are read when asked for, from the scope as it was.
 *
 * Rank ("most representative first"): the sources the insight quotes, in the order it quotes them, each
 * with the span it quotes; then the others by their best statement for the theme: the highest relevance
 * (units.ts's score), then the strongest opinion, then the earliest in the text.
 */
export type ThemeSide = ThemePolarity | "any";

export interface ThemeMember {
  contentId: string;
  unitId: string | null;
  start: number;
  end: number;
}

export interface ThemeSources {
  /** The insight's number in the result (1-based), its `id`. */
  insight: number;
  aspect: string;
  /** The side the theme's sources take on its aspect; `any` for a topic overview (every source talking about it). */
  side: ThemeSide;
  /** The question's focus as the scope's count read it ('' for every statement; scope-counts.ts `rollupFocus`). */
  focus: string;
  /** The names the theme was counted under over the scope; empty when the sample's count is the count. */
  phrases: string[];
  /** The count the insight states. */
  sources: number;
  /** The sample's sources, most representative first. */
  members: ThemeMember[];
}

/** The scope as it was counted, for reading the rest of its sources later. */
export interface ScopeSnapshot {
  /** Stored originals after this moment are not the analysis's. */
  asOf: Date;
  entityIds: string[];
  platforms: string[] | null;
  excludeFirstParty: boolean;
  /** Stored originals in scope then. */
  sources: number;
}

export interface ThemeSourcesOutput {
  /** Present when at least one theme was counted over the scope. */
  scope: ScopeSnapshot | null;
  themes: ThemeSources[];
}

/** A unit's best-first order for a theme: relevance, then strength of opinion, then place in the text. */
function better(a: Unit, b: Unit): number {
  return b.relevance - a.relevance || Math.abs(b.sentiment) - Math.abs(a.sentiment) || a.start - b.start;
}

/** The sample's sources of a theme, most representative first (see above). */
export function rankMembers(theme: Pick<Theme, "units">, quoted: InsightItem["evidence"]): ThemeMember[] {
  const best = new Map<string, Unit>();
  for (const u of theme.units) {
    const held = best.get(u.contentId);
    if (!held || better(u, held) < 0) best.set(u.contentId, u);
  }
  const members: ThemeMember[] = [];
  const placed = new Set<string>();
  for (const e of quoted) {
    if (placed.has(e.content_id) || !best.has(e.content_id)) continue;
    placed.add(e.content_id);
    members.push({ contentId: e.content_id, unitId: e.opinion_unit_id, start: e.start_offset, end: e.end_offset });
  }
  const rest = [...best.values()]
    .filter((u) => !placed.has(u.contentId))
    .sort((a, b) => better(a, b) || a.contentId.localeCompare(b.contentId));
  for (const u of rest) {
    const q = quoteOf(u);
    members.push({ contentId: u.contentId, unitId: u.id, start: q.start_offset ?? u.start, end: q.end_offset ?? u.end });
  }
  return members;
}

/**
 * The sources of each insight: `insights[k]` was assembled from `themes[drafts[k]]`. A theme with an
 * `analysed` count was counted over the scope under its phrases (those the stored units can name).
 */
export function themeSourcesOf(
  themes: Theme[],
  insights: InsightItem[],
  drafts: number[],
  context: { focus: string; unnamed: ReadonlySet<string>; scope: ScopeSnapshot | null },
): ThemeSourcesOutput {
  const out: ThemeSources[] = [];
  for (const [k, insight] of insights.entries()) {
    const theme = themes[drafts[k] as number];
    if (!theme) continue;
    const counted = theme.analysed !== undefined && context.scope !== null;
    out.push({
      insight: k + 1,
      aspect: theme.aspect,
      side: theme.overview ? "any" : theme.polarity,
      focus: context.focus,
      phrases: counted ? (theme.phrases ?? [theme.aspect]).filter((n) => !context.unnamed.has(n)) : [],
      sources: insight.sources,
      members: rankMembers(theme, insight.evidence),
    });
  }
  return { scope: out.some((t) => t.phrases.length > 0) ? context.scope : null, themes: out };
}
