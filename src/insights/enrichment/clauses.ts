import { CONTRAST_AFTER_COMMA, CONTRAST_WORDS, LEADING_CONTRAST } from "./feedback-cues.js";
import { indexIn, isPunct, type Token } from "./tokens.js";

/**
 * Clauses of a sentence as token ranges `[from, to)`. A sentence splits where a contrast
 * opens ("great food but rude staff", "…; however …", "although X, Y"), at semicolons
 * and at dashes between words, so that each side's polarity attaches to its own aspect.
 * A split that would leave a side with fewer than MIN_CLAUSE_WORDS words is not made
 * ("The onboarding was smooth though."). Boundary words and punctuation belong to no
 * clause, so every clause is a verbatim slice that reads on its own.
 */
export const MIN_CLAUSE_WORDS = 2;

export type Range = [number, number];

const words = (tokens: Token[], [from, to]: Range) => tokens.slice(from, to).filter((t) => t.type === "word" || t.type === "number").length;
const TRAILING = new Set([",", ";", ":", "-", "–", "—"]);
const DASHES = new Set(["-", "–", "—"]);

/** The range without leading punctuation and trailing separators. */
export function trimRange(tokens: Token[], [from, to]: Range): Range {
  let a = from;
  let b = to;
  while (a < b && isPunct(tokens[a]!) && !["(", "“", '"', "'"].includes(tokens[a]!.text)) a++;
  while (b > a && (TRAILING.has(tokens[b - 1]!.text) || tokens[b - 1]!.pos === "CCONJ")) b--;
  return [a, b];
}

function isBoundary(tokens: Token[], i: number): boolean {
  const t = tokens[i]!;
  const prev = tokens[i - 1];
  const next = tokens[i + 1];
  if (t.text === ";") return true;
  if (DASHES.has(t.text) && t.text !== "-") return true;
  if (t.text === "-" && prev && next && prev.end < t.start && t.end < next.start) return true;
  if (!CONTRAST_WORDS.has(t.normal)) return false;
  if (CONTRAST_AFTER_COMMA.has(t.normal)) return prev?.text === "," || prev?.text === ";";
  // "not only … but also" is not a contrast.
  if (t.normal === "but" && next?.normal === "also") return false;
  return true;
}

/** Splits `range` at its contrast boundaries. */
export function contrastClauses(tokens: Token[], range: Range = [0, tokens.length]): Range[] {
  const [from, to] = range;
  const cuts: number[] = [];
  const firstWord = indexIn(tokens, from, to, (t) => !isPunct(t));
  // "Although the app is pricey, support is great": the leading clause ends at its comma.
  if (firstWord >= 0 && LEADING_CONTRAST.has(tokens[firstWord]!.normal)) {
    const comma = indexIn(tokens, firstWord + 1, to, (t) => t.text === ",");
    if (comma > 0) cuts.push(comma);
  }
  for (let i = from + 1; i < to; i++) if (i !== firstWord && isBoundary(tokens, i)) cuts.push(i);
  cuts.sort((a, b) => a - b);

  const out: Range[] = [];
  let start = from;
  for (const cut of cuts) {
    if (cut <= start) continue;
    const left = trimRange(tokens, [start, cut]);
    // The boundary word (and a comma after it) belongs to neither side.
    let next = cut + 1;
    while (next < to && (tokens[next]!.text === "," || DASHES.has(tokens[next]!.text))) next++;
    const right = trimRange(tokens, [next, to]);
    if (words(tokens, left) < MIN_CLAUSE_WORDS || words(tokens, right) < MIN_CLAUSE_WORDS) continue;
    out.push(left);
    start = next;
  }
  const last = trimRange(tokens, [start, to]);
  // The last clause keeps the sentence's own end; a single clause is the whole sentence.
  if (out.length === 0) return [[from, to]];
  out.push([last[0], to]);
  return out;
}

/** Places inside a clause where a polarity or a request may begin: commas and "and". */
export function innerBoundaries(tokens: Token[], [from, to]: Range): number[] {
  const out: number[] = [];
  for (let i = from + 1; i < to - 1; i++) {
    const t = tokens[i]!;
    if (t.text === "," || (t.pos === "CCONJ" && t.normal === "and")) out.push(i);
  }
  return out;
}
