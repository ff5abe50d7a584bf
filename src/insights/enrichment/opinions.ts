import { type AspectCandidate, aspectCandidates, OVERALL } from "./aspects.js";
import { contrastClauses, innerBoundaries, MIN_CLAUSE_WORDS, type Range, trimRange } from "./clauses.js";
import { readComparison } from "./comparisons.js";
import { OVERALL_MARKERS, OVERALL_WORDS } from "./feedback-cues.js";
import { clausePolarity, mayJudge, phraseCues } from "./polarity.js";
import { type Format, proseRanges, type SectionRole } from "./structure.js";
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
/**
 * `request`: a wish or feature request ("I wish it had", "please add", or anything under a template's
 * "describe the solution you'd like"); never praise. `bug`: a defect described (under a template's
 * bug description, steps, expected or actual behaviour, or a complaint naming a failure). `question`:
 * the author asks something. `opinion`: everything else.
 */
export type UnitKind = "opinion" | "request" | "bug" | "question";

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
  /** The other product the unit compares the tracked one with ("Obsidian is much better than this"), as written. */
  comparedWith: string | null;
  /** The author leaves or left, or tells others to stay away ("switched to Bear", "uninstalled", "best avoided"). */
  churn: boolean;
}

/**
 * Version of the opinion analyser; stored with each unit, so units written by an older one are recomputed when analysed
 * and re-analysed by the `reanalyse` operator command (reanalyse.ts). 5: amounts and durations by amounts.ts. 6: markup
 * kept out of units (structure.ts): labels, environment fields and their values, unfenced logs, traces and code.
 */
export const ANALYSER_VERSION = 6;

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
/**
 * Text that holds no character after which a sentence can end (Unicode's sentence terminators and paragraph
 * separators, UAX #29 rules SB4 and SB11), checked on printable ASCII and tabs without ".", "!" and "?": one
 * sentence, as the segmenter would answer, without the segmenter's cost.
 */
const ONE_SENTENCE = /^[\t\x20\x22-\x2d\x2f-\x3e\x40-\x7e]*$/;

/** Sentence spans as UTF-16 offsets, trimmed of surrounding whitespace, long ones cut at spaces. */
export function sentenceSpans(text: string): { start: number; end: number }[] {
  const spans: { start: number; end: number }[] = [];
  const segments = ONE_SENTENCE.test(text) ? [{ segment: text, index: 0 }] : segmenter.segment(text);
  for (const seg of segments) {
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
 * opposite opinions about different aspects ("great food and rude staff"). `known` is the clause's
 * reading when the caller has made it already.
 */
function refineClause(tokens: Token[], range: Range, known?: Clause): Clause[] {
  for (const b of innerBoundaries(tokens, range)) {
    const left = trimRange(tokens, [range[0], b]);
    const rightRange: Range = [trimRange(tokens, [b + 1, range[1]])[0], range[1]];
    if (wordCount(tokens, left) < MIN_CLAUSE_WORDS || wordCount(tokens, rightRange) < MIN_CLAUSE_WORDS) continue;
    // Either cut needs both sides opinionated: a neutral left side spares reading the right one, and a side
    // with no word that can judge or ask (mayJudge) is neutral without being read.
    if (!mayJudge(tokens, left[0], left[1])) continue;
    const l = analyseClause(tokens, left);
    if (!opinionated(l)) continue;
    if (!mayJudge(tokens, rightRange[0], rightRange[1])) continue;
    const r = analyseClause(tokens, rightRange);
    if (!opinionated(r)) continue;
    const kindShift = l.request !== r.request;
    const polarityShift = !l.request && !r.request && l.score * r.score < 0 && specific(l) && specific(r);
    // The right side is read again for cuts of its own; if it has none, its reading is the one just made.
    if (kindShift || polarityShift) return [l, ...refineClause(tokens, rightRange, r)];
  }
  return [known ?? analyseClause(tokens, range)];
}

const opensWithOverall = (text: string) => {
  const lower = text.toLowerCase();
  return OVERALL_MARKERS.some((m) => lower.startsWith(m) && !/[\p{L}]/u.test(lower.charAt(m.length)));
};

const BUG_ROLES = new Set<SectionRole>(["bug_description", "reproduction", "expected", "actual"]);
const REQUEST_ROLES = new Set<SectionRole>(["feature_request", "alternatives"]);
/** Words that name a failure: a complaint holding one describes a defect. */
const DEFECT =
  /\b(?:crash\w*|freez\w*|froze|hang(?:s|ing)?|error\w*|exception|fail\w*|broken|bug\w*|glitch\w*|doesn'?t work|does not work|not working|won'?t (?:load|open|start|sync|work)|stopped working|regression|wrong)\b/i;

/** How strongly a comparison or a churn signal judges the product, when the clause's own words say less. */
const COMPARISON_VALENCE = 0.5;

/** Sections that describe what to do or what should happen: their sentences judge nothing. */
const UNJUDGED_ROLES = new Set<SectionRole>(["reproduction", "expected", "environment"]);

/** Steps and environment details: part of a bug report, but context rather than a statement of the defect. */
const CONTEXT_ROLES = new Set<SectionRole>(["reproduction", "environment"]);

function unitKind(clause: Clause | null, unitText: string, role: SectionRole, label: SentimentLabel): UnitKind {
  if (clause?.request || REQUEST_ROLES.has(role)) return "request";
  if (/\?["')\]]*$/.test(unitText) && !CONTEXT_ROLES.has(role)) return "question";
  if (CONTEXT_ROLES.has(role)) return "opinion";
  if (BUG_ROLES.has(role) && label !== "positive") return "bug";
  if (label === "negative" && DEFECT.test(unitText)) return "bug";
  return "opinion";
}

/** Longest inline cut-out (inline code, a link's address, a comment) that a sentence is read across. */
const MAX_INLINE_GAP = 120;

/**
 * The author's prose as stretches to cut into sentences: prose ranges of one paragraph or list item
 * that only an inline cut-out on the same line separates ("Running `npm test` crashes") are read as
 * one stretch, so the sentence stays whole; its unit quotes the inline code verbatim with it.
 */
function proseSentencesRanges(text: string, format?: Format) {
  const out: ReturnType<typeof proseRanges> = [];
  for (const range of proseRanges(text, format)) {
    const last = out.at(-1);
    const gap = last ? text.slice(last.end, range.start) : "";
    if (last && last.block === range.block && !gap.includes("\n") && gap.length <= MAX_INLINE_GAP) last.end = range.end;
    else out.push({ ...range });
  }
  return out;
}

/**
 * Every opinion unit of a text, in order. Only the author's prose is read (structure.ts): code,
 * template prompts, headings, quoted replies, stack traces, logs and environment dumps never become
 * units. Deterministic for a newly loaded engine: same text, same units (tokens.ts, on wink-nlp's memory of words).
 */
export function opinionUnits(text: string, format?: Format): OpinionSpan[] {
  const toCp = codePointIndexer(text);
  const units: OpinionSpan[] = [];
  let previous = null as { aspect: string | null; end: number } | null;
  for (const range of proseSentencesRanges(text, format)) {
    const prose = text.slice(range.start, range.end);
    for (const piece of sentenceSpans(prose)) {
      const start = range.start + piece.start;
      const end = range.start + piece.end;
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
        const role = range.sectionRole;
        const kind = unitKind(clause, text.slice(from, clause && tokens ? Math.min(end, to + 2) : to), role, labelFor(clause?.score ?? 0));
        const comparison = readComparison(unitText);
        let score = clause && kind !== "request" && !UNJUDGED_ROLES.has(role) ? clause.score : 0;
        // A comparison says which side the product is on; praise of a rival alone says nothing of it.
        if (kind !== "request") {
          if (comparison.verdict === -1) score = Math.min(score, -COMPARISON_VALENCE);
          else if (comparison.verdict === 1) score = Math.max(score, COMPARISON_VALENCE);
          else if (comparison.verdict === 0) score = 0;
        }
        const judged = clause ? opinionated(clause) : false;
        const named = clause?.candidates.filter((c) => !c.whole) ?? [];
        // The rival is a target, not an aspect of the product.
        const rival = comparison.comparedWith?.toLowerCase();
        const ownNamed = rival ? named.filter((c) => !rival.includes(c.aspect) && !c.aspect.includes(rival)) : named;
        let aspect: string | null = ownNamed[0]?.aspect ?? null;
        // Said of the product as a whole, naming it ("The app is great", "Overall, …"), as
        // opposed to judged with nothing named ("Would recommend", or nothing before it to refer to).
        let whole = false;
        if (!aspect && (judged || comparison.verdict !== null)) {
          whole = Boolean(clause?.candidates.some((c) => c.whole && c.subject) || opensWithOverall(unitText));
          const verdict = clause && tokens?.slice(clause.range[0], clause.range[1]).some((t) => OVERALL_WORDS.has(t.lemma));
          aspect = whole || verdict || !previous?.aspect ? OVERALL : previous.aspect;
        }
        // An aspect taken from the clause before is the unit's aspect but not one of its terms.
        const terms = [...new Set([...(whole ? [OVERALL] : []), ...ownNamed.map((c) => c.aspect)])].slice(0, 6);
        units.push({
          start: toCp(from),
          end: toCp(to),
          text: unitText,
          aspect,
          sentiment: score,
          label: labelFor(score),
          kind,
          terms,
          comparedWith: comparison.comparedWith,
          churn: comparison.churn,
        });
        previous = { aspect: aspect ?? previous?.aspect ?? null, end: to };
      }
    }
  }
  return units;
}
