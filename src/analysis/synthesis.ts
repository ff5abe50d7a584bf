import type { Db } from "../platform/db.js";
import { type QuoteCandidate, type VerifiedQuote, verifyQuotes } from "./evidence.js";
import type { EvidenceItem, InsightItem } from "./schemas.js";
import type { Theme, Unit } from "./themes.js";

/**
 * Drafts and their assembly. A draft (from the extractive engine or a language model)
 * proposes insights with quote candidates and, optionally, an answer whose citations are
 * `{{ref:i}}` placeholders into `refs`. `assemble` sends every candidate through
 * `verifyQuotes` once, numbers the survivors [1], [2], ... in order of first use, drops
 * insights left without evidence and rewrites or removes the answer's citations.
 */
export type InsightSentiment = InsightItem["sentiment"];

export interface InsightDraft {
  title: string;
  summary: string;
  sentiment: InsightSentiment;
  confidence: number;
  evidence: QuoteCandidate[];
}

export interface AnswerDraft {
  text: string;
  refs: QuoteCandidate[];
}

export interface Assembled {
  insights: InsightItem[];
  evidence: EvidenceItem[];
  citations: { number: number; content_id: string; quote: string }[];
  answer: string | null;
  dropped: number;
  verified: VerifiedQuote[];
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

export function themeSentiment(units: Unit[]): { sentiment: InsightSentiment; positive: number; negative: number; neutral: number } {
  const positive = units.filter((u) => u.label === "positive").length;
  const negative = units.filter((u) => u.label === "negative").length;
  const neutral = units.length - positive - negative;
  const opinionated = positive + negative;
  let sentiment: InsightSentiment = "neutral";
  if (opinionated > 0 && opinionated >= neutral / 2) {
    if (positive > 0 && negative > 0 && Math.min(positive, negative) / opinionated >= 0.3) sentiment = "mixed";
    else sentiment = positive > negative ? "positive" : "negative";
  }
  return { sentiment, positive, negative, neutral };
}

const LEAN: Record<InsightSentiment, string> = {
  positive: "mostly positive",
  negative: "mostly negative",
  mixed: "mixed views",
  neutral: "mentioned without strong sentiment",
};

const capitalise = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);
const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;

/**
 * Confidence of an extractive insight: support (independent sources, then statements)
 * scaled by how much the statements agree in sentiment, capped at 0.95. One source alone
 * stays below 0.4; mixed views lower it.
 */
export function confidenceOf(distinctRows: number, units: number, agreement: number): number {
  const support = 0.25 + 0.1 * Math.min(distinctRows, 5) + 0.01 * Math.min(units, 10);
  return Math.round(Math.min(0.95, support * (0.6 + 0.4 * agreement)) * 100) / 100;
}

export function extractiveInsights(
  themes: Theme[],
  platformOf: Map<string, string>,
  maxInsights: number,
  evidencePerInsight: number,
): InsightDraft[] {
  return themes.slice(0, maxInsights).map((theme) => {
    const { sentiment, positive, negative, neutral } = themeSentiment(theme.units);
    const rows = [...new Set(theme.units.map((u) => u.contentId))];
    const platforms = [...new Set(rows.map((r) => platformOf.get(r) ?? "unknown"))].sort();
    const majority = Math.max(positive, negative, neutral);
    const agreement = theme.units.length === 0 ? 0 : majority / theme.units.length;
    // Evidence: the best unit of each row first, then further units, in relevance order.
    const ordered = [...theme.units].sort(
      (a, b) => b.relevance - a.relevance || a.contentId.localeCompare(b.contentId) || a.start - b.start,
    );
    const firstPerRow = ordered.filter((u, i) => ordered.findIndex((v) => v.contentId === u.contentId) === i);
    const evidence = [...firstPerRow, ...ordered.filter((u) => !firstPerRow.includes(u))].slice(0, evidencePerInsight).map(quoteOf);
    return {
      title: `${capitalise(theme.key)}: ${LEAN[sentiment]}`,
      summary:
        `${plural(theme.units.length, "statement")} from ${plural(rows.length, "source")} (${platforms.join(", ")}) ${theme.units.length === 1 ? "discusses" : "discuss"} ${theme.key}: ` +
        `${positive} positive, ${negative} negative, ${neutral} neutral.`,
      sentiment,
      confidence: confidenceOf(rows.length, theme.units.length, agreement),
      evidence,
    };
  });
}

export function extractiveAnswer(question: string, insights: InsightItem[], rowsConsidered: number): string {
  if (insights.length === 0) return "The stored evidence in scope does not answer this question.";
  const sources = new Set(insights.flatMap((i) => i.evidence.map((e) => e.content_id))).size;
  const lines = insights.map((i) => `${i.title} ${i.evidence.map((e) => `[${e.number}]`).join("")}.`);
  return `Across ${plural(rowsConsidered, "retrieved source")}, ${plural(sources, "source")} speak to "${question.trim()}". ${lines.join(" ")}`;
}

const key = (c: { content_id: string; quote: string }) => `${c.content_id}\u0000${c.quote}`;

export async function assemble(db: Db, workspaceIds: string[], insights: InsightDraft[], answer: AnswerDraft | null): Promise<Assembled> {
  const candidates = [...insights.flatMap((i) => i.evidence), ...(answer?.refs ?? [])];
  const { kept, dropped } = await verifyQuotes(db, candidates, { workspaceIds });
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
  for (const insight of insights) {
    const items: EvidenceItem[] = [];
    for (const candidate of insight.evidence) {
      const v = verifiedByKey.get(key(candidate));
      if (!v) continue;
      const item = number(v);
      if (!items.includes(item)) items.push(item);
    }
    if (items.length > 0) finalInsights.push({ ...insight, evidence: items });
  }

  let text: string | null = null;
  if (answer) {
    text = answer.text.replace(/\s?\{\{ref:(\d+)\}\}/g, (_m, i: string) => {
      const ref = answer.refs[Number(i)];
      const v = ref ? verifiedByKey.get(key(ref)) : undefined;
      return v ? ` [${number(v).number}]` : "";
    });
  }
  const citations = evidence.map((e) => ({ number: e.number, content_id: e.content_id, quote: e.quote }));
  return { insights: finalInsights, evidence, citations, answer: text, dropped: dropped.length, verified: kept };
}
