import { sliceCodePoints } from "../enrichment/opinions.js";
import { surfaceTerms } from "./aspect-mining.js";
import { MIN_QUOTE_CHARS, type QuoteCandidate, type Verification, type VerifiedQuote } from "./evidence.js";
import type { EvidenceItem, InsightItem } from "./schemas.js";
import { plural } from "./text.js";
import { isSplit, type SourceCounts, type Theme, type ThemePolarity } from "./themes.js";
import type { Unit } from "./units.js";

/**
 * Insight drafts of the extractive engine and their assembly, both pure. The drafts' quote
 * candidates (`draftQuotes`) go through the quote gate once (the engine reads their originals,
 * then `checkQuotes`); `assemble` takes that verification, numbers the surviving quotes [1], [2],
 * ... in order of first use and drops insights left without evidence.
 */
export type InsightSentiment = InsightItem["sentiment"];

export interface InsightDraft {
  title: string;
  summary: string;
  sentiment: InsightSentiment;
  confidence: number;
  evidence: QuoteCandidate[];
  /** Set by the extractive engine; a language model's insights get them from their sentiment and evidence. */
  aspect?: string | null;
  polarity?: InsightItem["polarity"];
  sources?: number;
  /** Distinct sources of the theme in the analysed sample, when `sources` counts every stored source in scope. */
  sourcesAnalysed?: number;
  counts?: SourceCounts;
}

export interface Assembled {
  insights: InsightItem[];
  evidence: EvidenceItem[];
  citations: { number: number; content_id: string; quote: string }[];
  dropped: number;
  verified: VerifiedQuote[];
  /** For each insight, the index of the draft it was assembled from (drafts left without evidence are dropped). */
  drafts: number[];
}

/** Longest quote, in code points; longer units are quoted up to a word boundary. */
export const MAX_QUOTE_CHARS = 400;

export function quoteOf(unit: Unit): QuoteCandidate {
  const chars = Array.from(unit.text);
  if (chars.length <= MAX_QUOTE_CHARS) {
    return { content_id: unit.contentId, quote: unit.text, start_offset: unit.start, end_offset: unit.end, opinion_unit_id: unit.id };
  }
  let cut = MAX_QUOTE_CHARS;
  while (cut > MAX_QUOTE_CHARS / 2 && !/\s/u.test(chars[cut] ?? "")) cut--;
  const quote = chars.slice(0, cut).join("").trimEnd();
  const length = Array.from(quote).length;
  return { content_id: unit.contentId, quote, start_offset: unit.start, end_offset: unit.start + length, opinion_unit_id: unit.id };
}

/**
 * Confidence of an extractive insight: support (independent sources, then statements)
 * scaled by how much the sources agree, capped at 0.95. One source alone stays below
 * 0.4; split views lower it.
 */
export function confidenceOf(distinctRows: number, units: number, agreement: number): number {
  const support = 0.25 + 0.1 * Math.min(distinctRows, 5) + 0.01 * Math.min(units, 10);
  return Math.round(Math.min(0.95, support * (0.6 + 0.4 * agreement)) * 100) / 100;
}

const SENTIMENT_OF: Record<ThemePolarity, InsightSentiment> = {
  complaint: "negative",
  praise: "positive",
  request: "neutral",
  neutral: "neutral",
};

const POLARITY_OF: Record<InsightSentiment, InsightItem["polarity"]> = {
  negative: "complaint",
  positive: "praise",
  mixed: "mixed",
  neutral: "neutral",
};

const praises = (n: number) => `${n} ${n === 1 ? "praises" : "praise"} it`;
const complain = (n: number) => `${n} ${n === 1 ? "complains" : "complain"}`;

/** What a topic's sources say, largest side first: "; 31 report problems, 11 ask for more". */
function sidesSaid(counts: Theme["counts"]): string {
  const parts: [number, string][] = [
    [counts.complaint, `${counts.complaint} ${counts.complaint === 1 ? "reports a problem" : "report problems"}`],
    [counts.request, `${counts.request} ${counts.request === 1 ? "asks" : "ask"} for more`],
    [counts.praise, praises(counts.praise)],
  ];
  const said = parts.filter(([n]) => n > 0).sort((a, b) => b[0] - a[0]);
  return said.length === 0 ? "" : `: ${said.map(([, text]) => text).join(", ")}`;
}

/** "Sync — complaints (3 sources)"; a side that has another says so with its count: "Food — praise (4 sources; split, 3 complain)". */
function titleOf(theme: Theme): string {
  const { counts, sources } = theme;
  if (theme.overview) return `${theme.label} (${plural(sources, "source")}${sidesSaid(counts)})`;
  const split = isSplit(counts) ? "split, " : "";
  const n = plural(sources, "source");
  switch (theme.polarity) {
    case "complaint":
      return `${theme.label} — complaints (${n}${counts.praise > 0 ? `; ${split}${praises(counts.praise)}` : ""})`;
    case "praise":
      return `${theme.label} — praise (${n}${counts.complaint > 0 ? `; ${split}${complain(counts.complaint)}` : ""})`;
    case "request":
      return `${theme.label} — ${sources === 1 ? "feature request" : "feature requests"} (${n})`;
    default:
      return `${theme.label} — mentioned without a clear opinion (${n})`;
  }
}

function summaryOf(theme: Theme, platforms: string[]): string {
  const { counts, sources } = theme;
  const name = nameOf(theme);
  const who = `${plural(sources, "source")} (${platforms.join(", ")})`;
  if (theme.overview) return `${who} ${sources === 1 ? "talks" : "talk"} about ${name}${sidesSaid(counts)}.`;
  const others: string[] = [];
  if (theme.polarity !== "praise" && counts.praise > 0) others.push(praises(counts.praise));
  if (theme.polarity !== "complaint" && counts.complaint > 0) others.push(complain(counts.complaint));
  if (theme.polarity !== "request" && counts.request > 0)
    others.push(`${counts.request} ${counts.request === 1 ? "asks" : "ask"} for more`);
  if (theme.polarity !== "neutral" && counts.neutral > 0)
    others.push(`${counts.neutral} ${counts.neutral === 1 ? "mentions" : "mention"} it without a clear opinion`);
  const rest = others.length > 0 ? ` Of the sources talking about it, ${others.join(", ")}.` : "";
  const words = surfaceTerms(
    theme.aspect,
    theme.units.map((u) => u.text),
  );
  const said = words.length > 1 ? ` Words used: ${words.join(", ")}.` : "";
  const one = sources === 1;
  const split = isSplit(counts) ? "; opinion on it is split" : "";
  switch (theme.polarity) {
    case "complaint":
      return `${who} ${one ? "complains" : "complain"} about ${name}${split}.${said}${rest}`;
    case "praise":
      return `${who} ${one ? "praises" : "praise"} ${name}${split}.${said}${rest}`;
    case "request":
      return `${who} ${one ? "makes a feature request" : "make feature requests"} about ${name}.${said}${rest}`;
    default:
      return `${who} ${one ? "mentions" : "mention"} ${name} without a clear opinion.`;
  }
}

/** How the prose names a theme's aspect: "sync", "web clipper", "UI & design". */
export function nameOf(theme: Pick<Theme, "label">): string {
  const { label } = theme;
  return /^\p{Lu}\p{Ll}/u.test(label) ? label.charAt(0).toLowerCase() + label.slice(1) : label;
}

/**
 * Units in the order a theme quotes them. For a focused question, units of the sources most clearly
 * of the asked feedback kind first (`fitOf`, focus.ts's kindFit, in tenths; a source of another kind
 * after every other): "What bugs do users report most?" quotes the clearest bug reports. Then those
 * that name the aspect themselves before those that take it from the clause before, those of sources
 * of one mind (see `Theme.conflicted`) before those of sources that also take the other side, those
 * about this aspect alone before those that also name others, the strongest first; one per source
 * before a second from any.
 */
function evidenceOrder(theme: Theme, fitOf?: ReadonlyMap<string, number>): Unit[] {
  const fitTenths = (u: Unit) => Math.floor((fitOf?.get(u.contentId) ?? 0) * 10);
  const names = (u: Unit) => (u.terms.includes(theme.aspect) ? 1 : 0);
  const conflicted = new Set(theme.conflicted);
  const clear = (u: Unit) => (conflicted.has(u.contentId) ? 0 : 1);
  const others = (u: Unit) => u.terms.filter((t) => t !== theme.aspect).length;
  const quotable = theme.units.filter((u) => u.text.trim().length >= MIN_QUOTE_CHARS);
  const ordered = [...quotable].sort(
    (a, b) =>
      fitTenths(b) - fitTenths(a) ||
      names(b) - names(a) ||
      clear(b) - clear(a) ||
      Math.min(others(a), 2) - Math.min(others(b), 2) ||
      Math.abs(b.sentiment) - Math.abs(a.sentiment) ||
      b.relevance - a.relevance ||
      a.contentId.localeCompare(b.contentId) ||
      a.start - b.start,
  );
  const firstPerRow = ordered.filter((u, i) => ordered.findIndex((v) => v.contentId === u.contentId) === i);
  return [...firstPerRow, ...ordered.filter((u) => !firstPerRow.includes(u))];
}

/**
 * A theme's units with each run of adjacent units of one source joined into one span
 * ("Sync took 20 minutes. Unacceptable for a notes app."), so a quote carries its context.
 */
function joinAdjacent(theme: Theme, contentOf: Map<string, string>): Theme {
  const sorted = [...theme.units].sort((a, b) => a.contentId.localeCompare(b.contentId) || a.start - b.start);
  const out: Unit[] = [];
  for (const u of sorted) {
    const prev = out.at(-1);
    const content = contentOf.get(u.contentId);
    if (prev && content && prev.contentId === u.contentId && u.start >= prev.end && u.end - prev.start <= MAX_QUOTE_CHARS) {
      const between = sliceCodePoints(content, prev.end, u.start);
      if (/^[^\S\n]*\n?[^\S\n]*$/u.test(between)) {
        out[out.length - 1] = {
          ...prev,
          end: u.end,
          text: sliceCodePoints(content, prev.start, u.end),
          sentiment: Math.max(-1, Math.min(1, prev.sentiment + u.sentiment)),
          relevance: Math.max(prev.relevance, u.relevance),
        };
        continue;
      }
    }
    out.push(u);
  }
  return { ...theme, units: out };
}

export function extractiveInsights(
  themes: Theme[],
  platformOf: Map<string, string>,
  contentOf: Map<string, string>,
  evidencePerInsight: number,
  fitOf?: ReadonlyMap<string, number>,
): InsightDraft[] {
  return themes.map((theme) => {
    const rows = [...new Set(theme.units.map((u) => u.contentId))];
    const platforms = [...new Set(rows.map((r) => platformOf.get(r) ?? "unknown"))].sort();
    const { counts } = theme;
    // Agreement: the share of the aspect's judging sources on this theme's side.
    const judging = counts.complaint + counts.praise;
    const agreement = theme.polarity === "request" || theme.polarity === "neutral" || judging === 0 ? 1 : theme.sources / judging;
    return {
      title: titleOf(theme),
      summary: summaryOf(theme, platforms),
      sentiment: SENTIMENT_OF[theme.polarity],
      confidence: confidenceOf(rows.length, theme.units.length, Math.min(1, agreement)),
      evidence: evidenceOrder(joinAdjacent(theme, contentOf), fitOf).slice(0, evidencePerInsight).map(quoteOf),
      aspect: theme.aspect,
      polarity: theme.polarity,
      sources: theme.sources,
      ...(theme.analysed !== undefined ? { sourcesAnalysed: theme.analysed } : {}),
      counts,
    };
  });
}

const key = (c: { content_id: string; quote: string }) => `${c.content_id}\u0000${c.quote}`;

/** Every quote candidate of the drafts, in order: what the quote gate checks. */
export function draftQuotes(insights: InsightDraft[]): QuoteCandidate[] {
  return insights.flatMap((i) => i.evidence);
}

/** The answer's insights and numbered evidence from the drafts and the gate's verdict on `draftQuotes(drafts)`. */
export function assemble(insights: InsightDraft[], verification: Verification): Assembled {
  const { kept, dropped } = verification;
  const verifiedByKey = new Map(kept.map((v) => [key(v), v]));

  const evidence: EvidenceItem[] = [];
  const numberOf = new Map<string, number>();
  const number = (v: VerifiedQuote): EvidenceItem => {
    const k = `${v.content_id}:${v.start_offset}:${v.end_offset}`;
    let n = numberOf.get(k);
    if (n === undefined) {
      n = evidence.length + 1;
      numberOf.set(k, n);
      const { entity_id: _entity, ...item } = v;
      evidence.push({ number: n, ...item });
    }
    return evidence[n - 1]!;
  };

  const finalInsights: InsightItem[] = [];
  const drafts: number[] = [];
  for (const [index, insight] of insights.entries()) {
    const items: EvidenceItem[] = [];
    for (const candidate of insight.evidence) {
      const v = verifiedByKey.get(key(candidate));
      if (!v) continue;
      const item = number(v);
      if (!items.includes(item)) items.push(item);
    }
    if (items.length === 0) continue;
    const { sourcesAnalysed, ...rest } = insight;
    finalInsights.push({
      ...rest,
      ...(sourcesAnalysed !== undefined ? { sources_analysed: sourcesAnalysed } : {}),
      aspect: insight.aspect ?? null,
      polarity: insight.polarity ?? POLARITY_OF[insight.sentiment],
      sources: insight.sources ?? new Set(items.map((e) => e.content_id)).size,
      evidence: items,
    });
    drafts.push(index);
  }

  const citations = evidence.map((e) => ({ number: e.number, content_id: e.content_id, quote: e.quote }));
  return { insights: finalInsights, evidence, citations, dropped: dropped.length, verified: kept, drafts };
}
