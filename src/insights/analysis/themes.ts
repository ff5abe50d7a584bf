import type { AspectModel } from "./aspect-mining.js";
import type { QuestionIntent } from "./question.js";
import { terms } from "./text.js";
import type { Unit } from "./units.js";

/**
 * From opinion units to themes (pure). A theme is an aspect people talk about (mined across the
 * analysed sources, see aspect-mining.ts) with one polarity: the complaints about it, the
 * praise for it, the feature requests for it, or (for an aspect nobody judges) its
 * neutral mentions. Each clause counts toward its own aspect with its own polarity, so a
 * source that praises the food and complains about the service is in both themes. Counts
 * are distinct sources, never statements; themes rank by distinct sources. An aspect with
 * both complaints and praise is reported on both sides, each side saying the other's
 * count (and "split" when neither side is a small minority). Everything here is
 * deterministic: same rows, same question, same themes in the same order.
 */
export type ThemePolarity = "complaint" | "praise" | "request" | "neutral";

/** Distinct sources of an aspect by what they say about it (a source may both complain and praise). */
export interface SourceCounts {
  complaint: number;
  praise: number;
  neutral: number;
  request: number;
}

export interface Theme {
  aspect: string;
  /** The names the stored units may carry for this theme's topic (its phrases), when it is a topic of the corpus. */
  phrases?: string[];
  label: string;
  polarity: ThemePolarity;
  units: Unit[];
  /** Distinct sources behind this theme (over every stored source in scope once counted there, scope-counts.ts). */
  sources: number;
  /** Distinct sources of the theme in the analysed sample, when `sources` was counted over the whole scope. */
  analysed?: number;
  /** The aspect's sources on every side. */
  counts: SourceCounts;
  /** Distinct sources that talk about the aspect at all, on any side. */
  mentions: number;
  /** The question names this aspect. */
  focus: boolean;
  /**
   * The theme is the whole topic, every side together (a general question: "What do users talk about?");
   * `polarity` is then its largest side and `sources` every source that talks about it.
   */
  overview?: boolean;
  /** Mean absolute sentiment of the theme's statements (0 for requests and neutral mentions). */
  strength: number;
  /**
   * The theme's sources that also take the opposite side somewhere (a complaint's sources that
   * praise something, a praise's sources that complain): their statements here are less clear-cut
   * examples of the theme, so they are quoted after those of sources that are of one mind.
   */
  conflicted: string[];
}

/** An aspect is split when the smaller of its complaint and praise sides holds at least this share of them. */
export const SPLIT_SHARE = 1 / 3;

export function isSplit(counts: SourceCounts): boolean {
  const { complaint, praise } = counts;
  return complaint > 0 && praise > 0 && Math.min(complaint, praise) / (complaint + praise) >= SPLIT_SHARE;
}

/**
 * The side a statement takes. A bug described is a complaint, whatever words it is described in, and so
 * is anything a bug report says about its subject that is not favourable; a wish, or a neutral statement
 * of a feature request, asks for something; a question asks. Only feedback that is none of these (a
 * review, a post) praises by its words: "Following the guide, I set up both proxies" in a bug report, or
 * "I'm a huge fan of the current integration" in a request, is no praise.
 */
export type SourceKinds = ReadonlyMap<string, string | null>;

export function sideOf(u: Unit, sourceKinds?: SourceKinds): ThemePolarity {
  if (u.kind === "request") return "request";
  if (u.kind === "bug") return "complaint";
  switch (sourceKinds?.get(u.contentId)) {
    case "bug_report":
      return u.label === "positive" ? "neutral" : "complaint";
    case "feature_request":
      return u.label === "negative" ? "complaint" : u.label === "positive" ? "neutral" : "request";
    case "question":
      return "neutral";
  }
  return u.label === "negative" ? "complaint" : u.label === "positive" ? "praise" : "neutral";
}

/**
 * Groups units into themes by aspect and polarity. Neutral mentions make a theme only for
 * an aspect nobody judges or asks for. Units under 2 words are not evidence.
 */
export function buildThemes(units: Unit[], model: AspectModel, intent: QuestionIntent, sourceKinds?: SourceKinds): Theme[] {
  const byAspect = new Map<string, Map<ThemePolarity, Unit[]>>();
  const sidesOfSource = new Map<string, Set<ThemePolarity>>();
  for (const u of units) {
    if ((u.text.match(/[\p{L}\p{N}]+/gu)?.length ?? 0) < 2) continue;
    const side = sideOf(u, sourceKinds);
    sidesOfSource.set(u.contentId, (sidesOfSource.get(u.contentId) ?? new Set()).add(side));
    const aspect = model.aspectOf(u);
    if (!aspect) continue;
    const sides = byAspect.get(aspect) ?? new Map<ThemePolarity, Unit[]>();
    sides.set(side, [...(sides.get(side) ?? []), u]);
    byAspect.set(aspect, sides);
  }
  const opposite: Partial<Record<ThemePolarity, ThemePolarity>> = { complaint: "praise", praise: "complaint" };
  const general = isGeneral(intent);
  const themes: Theme[] = [];
  for (const [aspect, sides] of byAspect) {
    const sourcesOn = (side: ThemePolarity) => new Set((sides.get(side) ?? []).map((u) => u.contentId));
    const judged = new Set([...sourcesOn("complaint"), ...sourcesOn("praise"), ...sourcesOn("request")]);
    const counts: SourceCounts = {
      complaint: sourcesOn("complaint").size,
      praise: sourcesOn("praise").size,
      request: sourcesOn("request").size,
      neutral: [...sourcesOn("neutral")].filter((id) => !judged.has(id)).length,
    };
    const mentions = new Set([...sides.values()].flat().map((u) => u.contentId)).size;
    const named = terms(aspect);
    const focus = intent.aspects.includes(aspect) || (named.length > 0 && named.every((t) => intent.topicTerms.includes(t)));
    if (general) {
      const all = [...sides.values()].flat();
      const judgedSides = (["complaint", "request", "praise"] as const).filter((side) => counts[side] > 0);
      const largest = judgedSides.sort((a, b) => counts[b] - counts[a])[0] ?? "neutral";
      const opinions = all.filter((u) => u.label !== "neutral" && u.kind === "opinion");
      themes.push({
        aspect,
        ...(model.phrasesOf ? { phrases: model.phrasesOf(aspect) } : {}),
        label: model.label(aspect),
        polarity: largest,
        units: all,
        sources: mentions,
        counts,
        mentions,
        focus,
        overview: true,
        strength: opinions.length === 0 ? 0 : opinions.reduce((sum, u) => sum + Math.abs(u.sentiment), 0) / opinions.length,
        conflicted: [],
      });
      continue;
    }
    for (const [polarity, members] of sides) {
      if (polarity === "neutral" && judged.size > 0) continue;
      const opinions = members.filter((u) => u.label !== "neutral" && u.kind === "opinion");
      const other = opposite[polarity];
      themes.push({
        aspect,
        ...(model.phrasesOf ? { phrases: model.phrasesOf(aspect) } : {}),
        label: model.label(aspect),
        polarity,
        units: members,
        sources: sourcesOn(polarity).size,
        counts,
        mentions,
        focus,
        strength: opinions.length === 0 ? 0 : opinions.reduce((sum, u) => sum + Math.abs(u.sentiment), 0) / opinions.length,
        conflicted: other === undefined ? [] : [...sourcesOn(polarity)].filter((id) => sidesOfSource.get(id)?.has(other)),
      });
    }
  }
  return themes.sort((a, b) => compareThemes(a, b, intent));
}

/**
 * A question about what is talked about that asks for no side and no kind of statement ("What do users
 * talk about most?"): answered topic by topic, each with what its sources say.
 */
export function isGeneral(intent: QuestionIntent): boolean {
  return intent.topics === true && intent.complaints && intent.praise && intent.requests && intent.ask === null;
}

/** Whether a theme answers what the question asks for (complaints, praise, requests). */
export function answersIntent(theme: Theme, intent: QuestionIntent): boolean {
  switch (theme.polarity) {
    case "complaint":
      return intent.complaints;
    case "praise":
      return intent.praise;
    case "request":
      return intent.requests;
    default:
      return false;
  }
}

const SIDE_ORDER: ThemePolarity[] = ["complaint", "praise", "request", "neutral"];

/** Order: aspects the question names, then themes that answer its intent, then distinct sources. */
export function compareThemes(a: Theme, b: Theme, intent: QuestionIntent): number {
  return (
    Number(b.focus) - Number(a.focus) ||
    Number(answersIntent(b, intent)) - Number(answersIntent(a, intent)) ||
    b.sources - a.sources ||
    b.strength - a.strength ||
    a.aspect.localeCompare(b.aspect) ||
    SIDE_ORDER.indexOf(a.polarity) - SIDE_ORDER.indexOf(b.polarity)
  );
}

/**
 * The themes an analysis reports: `limit` themes at most, and, with `coverage`, every
 * aspect that at least `minSources` distinct sources talk about (on any side) besides:
 * its largest side, and each other side that a third of that many sources take (at least
 * two), up to `cap` themes; so no aspect a meaningful share of the sources talks about goes
 * missing, nor its main complaints when praise dominates. A question about both
 * complaints and praise gets at least one of each when the limit is small.
 */
export function selectThemes(
  themes: Theme[],
  intent: QuestionIntent,
  limit: number,
  coverage?: { minSources: number; cap: number },
): Theme[] {
  const picked = new Set<Theme>();
  if (intent.complaints && intent.praise) {
    const complaint = themes.find((t) => t.polarity === "complaint");
    const praise = themes.find((t) => t.polarity === "praise");
    for (const t of [themes[0], complaint, praise]) if (t && picked.size < limit) picked.add(t);
  }
  for (const t of themes) if (picked.size < limit) picked.add(t);
  if (coverage) {
    const largest = new Map<string, Theme>();
    for (const t of themes) {
      const best = largest.get(t.aspect);
      if (!best || t.sources > best.sources) largest.set(t.aspect, t);
    }
    // Another side of a topic is a theme of its own when it is a third of the largest side and itself
    // as large as a topic must be; otherwise the largest side's title says its count.
    const sideOwn = (t: Theme) => {
      const top = largest.get(t.aspect)!;
      return top === t || (t.sources >= coverage.minSources && 3 * t.sources >= top.sources);
    };
    for (const t of themes) {
      if (picked.size >= coverage.cap) break;
      if (t.mentions >= coverage.minSources && sideOwn(t)) picked.add(t);
    }
  }
  return themes.filter((t) => picked.has(t));
}

/**
 * The reported themes with their counts over the whole scope (by theme index, scope-counts.ts) where
 * there are such counts: the analysed sample's counts are a floor (a source whose stored units predate
 * the analyser counts there), and `analysed` keeps the sample's count of the theme's sources.
 */
export function countOverScope(themes: Theme[], inScope: ReadonlyMap<number, SourceCounts>): Theme[] {
  return themes.map((t, i) => {
    const all = inScope.get(i);
    if (!all) return t;
    const counts = {
      complaint: Math.max(all.complaint, t.counts.complaint),
      praise: Math.max(all.praise, t.counts.praise),
      request: Math.max(all.request, t.counts.request),
      neutral: Math.max(all.neutral, t.counts.neutral),
    };
    return { ...t, counts, sources: Math.max(counts[t.polarity], t.sources), analysed: t.sources };
  });
}
