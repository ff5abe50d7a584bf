import { type AspectCandidate, aspectCandidates, OVERALL } from "./aspects.js";
import { contrastClauses, innerBoundaries, MIN_CLAUSE_WORDS, type Range, trimRange } from "./clauses.js";
import { OVERALL_MARKERS, OVERALL_WORDS } from "./feedback-cues.js";
import { clausePolarity, phraseCues } from "./polarity.js";
import { type Token, tokenize } from "./tokens.js";

/**
 * Opinion units: the clause-level spans of a stored original, each with the aspect it
 * talks about, a polarity and a kind (an opinion, or a request for something the product
 * lacks). Sentences come from `Intl.Segmenter` (Unicode sentence boundaries, exact
 * offsets); wink-nlp (English lite model) tokenises and tags them. A sentence is cut into
 * clauses where a contrast opens, and where a comma or "and" separates opposite opinions
 * or an opinion from a request ("great food and rude staff"), so each clause's polarity
 * attaches to its own aspect (polarity.ts, aspects.ts). A clause that names no aspect and
 * judges something ("Unacceptable for a notes app.") is about the previous clause's
 * aspect on the same line. Offsets count Unicode code points, so
 * `[...content].slice(start, end)` (and PostgreSQL's `substr(content, start + 1, end -
 * start)`) give back exactly `text`.
 */
export type SentimentLabel = "positive" | "negative" | "neutral";
/** `request`: a wish or feature request ("I wish it had", "please add"); never praise. */
export type UnitKind = "opinion" | "request";

export interface OpinionSpan {
  /** Code-point offsets into the row's content; the span's text is exactly that slice. */
  start: number;
  end: number;
  text: string;
  /** A lexicon aspect's canonical name ("pricing"), a noun phrase ("web clipper"), "overall", or null. */
  aspect: string | null;
  sentiment: number;
  label: SentimentLabel;
  kind: UnitKind;
  /**
   * Every aspect the unit names itself, best first ("overall" when it judges the product as
   * a whole); the analysis picks among them. Empty when its aspect comes from the clause
   * before ("Unacceptable for a notes app.").
   */
  terms: string[];
}

/** Version of the opinion analyser; stored with each unit, so units written by an older one are recomputed when analysed. */
export const ANALYSER_VERSION = 3;

/** Longest unit, in UTF-16 code units; longer sentences are cut at a space. */
export const MAX_UNIT_CHARS = 1000;
/** Units per row: very long rows keep their first MAX_UNITS_PER_ROW sentences. */
export const MAX_UNITS_PER_ROW = 1000;
export const SENTIMENT_THRESHOLD = 0.05;

export function labelFor(score: number): SentimentLabel {
  if (score >= SENTIMENT_THRESHOLD) return "positive";
  if (score <= -SENTIMENT_THRESHOLD) return "negative";
  return "neutral";
}

const segmenter = new Intl.Segmenter("en", { granularity: "sentence" });
const HAS_WORD = /[\p{L}\p{N}]/u;

/** Sentence spans as UTF-16 offsets, trimmed of surrounding whitespace, long ones cut at spaces. */
export function sentenceSpans(text: string): { start: number; end: number }[] {
  const spans: { start: number; end: number }[] = [];
  for (const seg of segmenter.segment(text)) {
    const raw = seg.segment;
    const lead = raw.length - raw.trimStart().length;
    const trail = raw.length - raw.trimEnd().length;
    let start = seg.index + lead;
    const end = seg.index + raw.length - trail;
    while (start < end) {
      let cut = end;
      if (cut - start > MAX_UNIT_CHARS) {
        const window = text.slice(start, start + MAX_UNIT_CHARS);
        const space = window.search(/\s\S*$/);
        cut = space > MAX_UNIT_CHARS / 2 ? start + space : start + MAX_UNIT_CHARS;
        // Never split a surrogate pair.
        if (/[\uD800-\uDBFF]/.test(text.charAt(cut - 1))) cut -= 1;
      }
      let pieceEnd = cut;
      while (pieceEnd > start && /\s/.test(text.charAt(pieceEnd - 1))) pieceEnd--;
      if (HAS_WORD.test(text.slice(start, pieceEnd))) spans.push({ start, end: pieceEnd });
      if (spans.length >= MAX_UNITS_PER_ROW) return spans;
      start = cut;
      while (start < end && /\s/.test(text.charAt(start))) start++;
    }
  }
  return spans;
}

/** Maps UTF-16 offsets to code-point offsets (identity for text without astral characters). */
export function codePointIndexer(text: string): (utf16: number) => number {
  if (!/[\uD800-\uDFFF]/.test(text)) return (i) => i;
  const table = new Uint32Array(text.length + 1);
  let cp = 0;
  for (let i = 0; i < text.length; i++) {
    table[i] = cp;
    const code = text.charCodeAt(i);
    if (code >= 0xd800 && code <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        table[i + 1] = cp;
        i++;
      }
    }
    cp++;
  }
  table[text.length] = cp;
  return (i) => table[i] ?? cp;
}

/** The code-point slice `[start, end)` of `text`. */
export function sliceCodePoints(text: string, start: number, end: number): string {
  if (!/[\uD800-\uDFFF]/.test(text)) return text.slice(start, end);
  return Array.from(text).slice(start, end).join("");
}

interface Clause {
  range: Range;
  score: number;
  request: boolean;
  candidates: AspectCandidate[];
}

const wordCount = (tokens: Token[], [from, to]: Range) =>
  tokens.slice(from, to).filter((t) => t.type === "word" || t.type === "number").length;

function analyseClause(tokens: Token[], range: Range): Clause {
  const [from, to] = range;
  const cues = phraseCues(tokens, from, to);
  const { candidates, neutral } = aspectCandidates(tokens, from, to, cues);
  const { score, request } = clausePolarity(tokens, from, to, cues, neutral);
  return { range, score, request, candidates };
}

const specific = (c: Clause) => c.candidates.some((a) => !a.whole);
const opinionated = (c: Clause) => c.request || labelFor(c.score) !== "neutral";

/**
 * A clause, cut again where a comma or "and" separates an opinion from a request, or two
 * opposite opinions about different aspects ("great food and rude staff").
 */
function refineClause(tokens: Token[], range: Range): Clause[] {
  for (const b of innerBoundaries(tokens, range)) {
    const left = trimRange(tokens, [range[0], b]);
    const rightRange: Range = [trimRange(tokens, [b + 1, range[1]])[0], range[1]];
    if (wordCount(tokens, left) < MIN_CLAUSE_WORDS || wordCount(tokens, rightRange) < MIN_CLAUSE_WORDS) continue;
    const l = analyseClause(tokens, left);
    const r = analyseClause(tokens, rightRange);
    const kindShift = l.request !== r.request && opinionated(l) && opinionated(r);
    const polarityShift =
      !l.request && !r.request && l.score * r.score < 0 && opinionated(l) && opinionated(r) && specific(l) && specific(r);
    if (kindShift || polarityShift) return [l, ...refineClause(tokens, rightRange)];
  }
  return [analyseClause(tokens, range)];
}

const opensWithOverall = (text: string) => {
  const lower = text.toLowerCase();
  return OVERALL_MARKERS.some((m) => lower.startsWith(m) && !/[\p{L}]/u.test(lower.charAt(m.length)));
};

/** Every opinion unit of a text, in order. Deterministic: same text, same units. */
export function opinionUnits(text: string): OpinionSpan[] {
  const toCp = codePointIndexer(text);
  const units: OpinionSpan[] = [];
  let previous = null as { aspect: string | null; end: number } | null;
  for (const { start, end } of sentenceSpans(text)) {
    const sentence = text.slice(start, end);
    // A new line starts a new thought: nothing is inherited across it.
    if (previous && text.slice(previous.end, start).includes("\n")) previous = null;
    const tokens = tokenize(sentence);
    const clauses = tokens ? contrastClauses(tokens).flatMap((r) => refineClause(tokens, r)) : [null];
    for (const clause of clauses) {
      if (units.length >= MAX_UNITS_PER_ROW) return units;
      const from = clause && tokens ? start + tokens[clause.range[0]]!.start : start;
      const to = clause && tokens ? start + tokens[clause.range[1] - 1]!.end : end;
      const unitText = text.slice(from, to);
      const score = clause && !clause.request ? clause.score : 0;
      const judged = clause ? opinionated(clause) : false;
      const named = clause?.candidates.filter((c) => !c.whole) ?? [];
      let aspect: string | null = named[0]?.aspect ?? null;
      // Said of the product as a whole, naming it ("The app is great", "Overall, …"), as
      // opposed to judged with nothing named ("Would recommend", or nothing before it to refer to).
      let whole = false;
      if (!aspect && judged) {
        whole = Boolean(clause?.candidates.some((c) => c.whole && c.subject) || opensWithOverall(unitText));
        const verdict = clause && tokens?.slice(clause.range[0], clause.range[1]).some((t) => OVERALL_WORDS.has(t.lemma));
        aspect = whole || verdict || !previous?.aspect ? OVERALL : previous.aspect;
      }
      // An aspect taken from the clause before is the unit's aspect but not one of its terms.
      const terms = [...new Set([...(whole ? [OVERALL] : []), ...named.map((c) => c.aspect)])].slice(0, 6);
      units.push({
        start: toCp(from),
        end: toCp(to),
        text: unitText,
        aspect,
        sentiment: score,
        label: labelFor(score),
        kind: clause?.request ? "request" : "opinion",
        terms,
      });
      previous = { aspect: aspect ?? previous?.aspect ?? null, end: to };
    }
  }
  return units;
}
