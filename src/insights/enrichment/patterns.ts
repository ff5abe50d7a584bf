import type { Token } from "./tokens.js";

/**
 * The token pattern language of feedback-cues.ts, compiled once. A match answers the
 * tokens it spans and the ones it consumes (every matched token but those marked `!`).
 */
interface Element {
  test: (t: Token) => boolean;
  /** Matches a run of one or more tokens (money amounts, durations). */
  run: boolean;
  optional: boolean;
  consume: boolean;
  /** `^`: only at the start of the clause; matches no token. */
  anchor: boolean;
  /** The words a plain word element requires (normal form or lemma): what the first-word index files it under. */
  words?: string[];
}

export interface Pattern {
  source: string;
  elements: Element[];
}

export interface PatternMatch {
  start: number;
  /** Exclusive. */
  end: number;
  consumed: number[];
}

const POS_CLASSES: Record<string, (t: Token) => boolean> = {
  VERB: (t) => t.pos === "VERB",
  ADJ: (t) => t.pos === "ADJ",
  ADV: (t) => t.pos === "ADV",
  NOUN: (t) => t.pos === "NOUN" || t.pos === "PROPN",
  NUM: (t) => t.pos === "NUM" || t.type === "number",
  DET: (t) => t.pos === "DET",
  PRON: (t) => t.pos === "PRON",
  ING: (t) => t.pos === "VERB" && t.normal.endsWith("ing"),
};
const isMoney = (t: Token) => t.entity === "MONEY" || t.type === "currency";
const isDuration = (t: Token) => t.entity === "DURATION";

function compileElement(raw: string): Element {
  let text = raw;
  const consume = !text.startsWith("!");
  if (!consume) text = text.slice(1);
  const optional = text.length > 1 && text.endsWith("?");
  if (optional) text = text.slice(0, -1);
  if (text === "^") return { test: () => true, run: false, optional: false, consume: false, anchor: true };
  if (text === "@MONEY") return { test: isMoney, run: true, optional, consume, anchor: false };
  if (text === "@DURATION") return { test: isDuration, run: true, optional, consume, anchor: false };
  if (text.startsWith("@")) {
    const cls = POS_CLASSES[text.slice(1)];
    if (!cls) throw new Error(`Unknown pattern class ${text}`);
    return { test: cls, run: false, optional, consume, anchor: false };
  }
  if (text === "*") return { test: () => true, run: false, optional, consume, anchor: false };
  const negate = text.startsWith("~");
  if (negate) text = text.slice(1);
  const [words, pos] = text.split("/");
  const list = (words ?? "").split("|");
  const set = new Set(list);
  const has = (t: Token) => set.has(t.normal) || set.has(t.lemma);
  const test = negate ? (t: Token) => !has(t) : pos ? (t: Token) => has(t) && t.pos === pos : has;
  return { test, run: false, optional, consume, anchor: false, ...(negate ? {} : { words: list }) };
}

export function compilePattern(source: string): Pattern {
  return { source, elements: source.split(/\s+/).filter(Boolean).map(compileElement) };
}

interface Window {
  tokens: Token[];
  from: number;
  to: number;
}

/**
 * Where the elements from `e` on match from token `i`: the end of the match (exclusive), or -1. Tokens
 * the matched elements consume are pushed on `consumed`; a branch that fails takes its own back off.
 */
function matchFrom(elements: Element[], w: Window, e: number, i: number, consumed: number[]): number {
  if (e === elements.length) return i;
  const el = elements[e]!;
  if (el.anchor) return i === w.from ? matchFrom(elements, w, e + 1, i, consumed) : -1;
  const token = i < w.to ? w.tokens[i] : undefined;
  if (token && el.test(token)) {
    let j = i + 1;
    if (el.run) while (j < w.to && el.test(w.tokens[j]!)) j++;
    const depth = consumed.length;
    if (el.consume) for (let k = i; k < j; k++) consumed.push(k);
    const end = matchFrom(elements, w, e + 1, j, consumed);
    if (end >= 0) return end;
    consumed.length = depth;
  }
  return el.optional ? matchFrom(elements, w, e + 1, i, consumed) : -1;
}

/** The first match of `pattern` starting at token `at` (within `[from, to)`), or null. */
export function matchAt(pattern: Pattern, tokens: Token[], at: number, from = 0, to = tokens.length): PatternMatch | null {
  const consumed: number[] = [];
  const end = matchFrom(pattern.elements, { tokens, from, to }, 0, at, consumed);
  if (end < 0 || end === at) return null;
  return { start: at, end, consumed };
}

/**
 * Which patterns can start at a token: a pattern that can only start with certain words (firstWords) is
 * filed under each of them; any other (opening with a class, `*`, a negation or a run) is always tried.
 * Built once per pattern list; the candidates keep the list's order, so the first pattern that matches is
 * the one a plain scan would find.
 */
interface FirstWordIndex {
  byWord: Map<string, number[]>;
  always: number[];
  /** Merged lists of two words' patterns (a token whose lemma differs from its normal form), by the two lists. */
  pairs: Map<number[], Map<number[], number[]>>;
  /** Some always-tried pattern can start anywhere; some only where the window opens (its first element is `^`). */
  alwaysAnywhere: boolean;
  alwaysAtStart: boolean;
}

const INDEXES = new WeakMap<Pattern[], FirstWordIndex>();

/**
 * The words a match of `p` can start with: those of its leading optional word elements and of the first
 * required one ("please? add|bring" starts with "please", "add" or "bring"); null when it can start with
 * anything (a class, `*`, a negation or a run among them, or no required element).
 */
function firstWords(p: Pattern): string[] | null {
  const words: string[] = [];
  for (const el of p.elements) {
    if (el.anchor) continue;
    if (el.run || !el.words) return null;
    words.push(...el.words);
    if (!el.optional) return words;
  }
  return null;
}

const merged = (a: number[], b: number[]) => [...new Set([...a, ...b])].sort((x, y) => x - y);

function indexOf(patterns: Pattern[]): FirstWordIndex {
  let index = INDEXES.get(patterns);
  if (index) return index;
  index = { byWord: new Map(), always: [], pairs: new Map(), alwaysAnywhere: false, alwaysAtStart: false };
  for (const [i, p] of patterns.entries()) {
    const words = firstWords(p);
    if (!words) {
      index.always.push(i);
      if (p.elements[0]?.anchor) index.alwaysAtStart = true;
      else index.alwaysAnywhere = true;
    } else
      for (const w of new Set(words)) {
        const list = index.byWord.get(w);
        if (list) list.push(i);
        else index.byWord.set(w, [i]);
      }
  }
  // Each word's list holds the always-tried patterns too, in list order, so a token reads one list.
  for (const [w, list] of index.byWord) index.byWord.set(w, merged(index.always, list));
  INDEXES.set(patterns, index);
  return index;
}

/** The patterns that may match at a token, in list order. */
function candidates(index: FirstWordIndex, t: Token): number[] {
  const a = index.byWord.get(t.normal);
  const b = t.lemma !== t.normal ? index.byWord.get(t.lemma) : undefined;
  if (a && b) {
    // Two words' lists, merged once per pair (the lists are the index's own, so the pair is their identity).
    let withA = index.pairs.get(a);
    if (!withA) {
      withA = new Map();
      index.pairs.set(a, withA);
    }
    let both = withA.get(b);
    if (!both) {
      both = merged(a, b);
      withA.set(b, both);
    }
    return both;
  }
  return a ?? b ?? index.always;
}

/**
 * Whether some pattern of `patterns` may match from token `at` of a window opening at `from`; false when
 * none can (no pattern is filed under the token's words, and none tried everywhere can start there). The
 * list's index is looked up once, for every token the returned test is asked about.
 */
export function mayStartAt(patterns: Pattern[]): (tokens: Token[], at: number, from: number) => boolean {
  const index = indexOf(patterns);
  return (tokens, at, from) => {
    if (index.alwaysAnywhere || (at === from && index.alwaysAtStart)) return true;
    const t = tokens[at]!;
    return index.byWord.has(t.normal) || index.byWord.has(t.lemma);
  };
}

/** Every non-overlapping match of any of `patterns` in `[from, to)`, left to right, first pattern first. */
export function findAll(patterns: Pattern[], tokens: Token[], from = 0, to = tokens.length): (PatternMatch & { index: number })[] {
  const out: (PatternMatch & { index: number })[] = [];
  const index = indexOf(patterns);
  let at = from;
  while (at < to) {
    let hit: (PatternMatch & { index: number }) | null = null;
    for (const i of candidates(index, tokens[at]!)) {
      const p = patterns[i]!;
      const m = matchAt(p, tokens, at, from, to);
      if (m) {
        hit = { ...m, index: i };
        break;
      }
    }
    if (hit) {
      out.push(hit);
      at = Math.max(hit.end, at + 1);
    } else at++;
  }
  return out;
}
