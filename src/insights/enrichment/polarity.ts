import {
  INTENSIFIERS,
  NEGATORS,
  NEUTRAL_NEGATED_VERBS,
  PHRASE_CUES,
  REQUEST_PATTERNS,
  SPEED_ADVERBS,
  SUBJECT_NEGATORS,
} from "./feedback-cues.js";
import { compilePattern, findAll, mayStartAt } from "./patterns.js";
import { isPunct, type Token, valenceOf } from "./tokens.js";

/**
 * Polarity of one clause, in the manner of VADER (Hutto & Gilbert 2014) over wink-nlp's
 * lexicon and the product-feedback cues: word and phrase valences, scaled by intensifiers
 * ("very", "a bit") and emphasis ("!", capitals), flipped by a negator up to three tokens
 * before ("doesn't work", "not worth it"), plus a missing-capability cue for negated
 * verbs that carry no opinion of their own ("search doesn't look inside PDFs"). The sum
 * is normalised to -1..1 with s / sqrt(s² + 1). A clause that asks for something ("I wish
 * it had", "please add", "would be nice if") is a request and scores 0.
 */
const PHRASES = PHRASE_CUES.map((c) => ({ ...c, compiled: compilePattern(c.pattern) }));
const REQUESTS = REQUEST_PATTERNS.map(compilePattern);

/** Scale of a negated opinion word (VADER's constant). */
const NEGATION_SCALE = -0.74;
/** Valence of a negated verb with no opinion of its own: something does not do what it should. */
const MISSING_CAPABILITY = -0.3;
const NEGATION_WINDOW = 3;

export interface ClauseCues {
  /** Phrase cues found, with the token where each starts. */
  phrases: { at: number; valence: number }[];
  /** Tokens a phrase cue accounts for: they carry no valence of their own. */
  consumed: Set<number>;
  /** Tokens of phrase cues whose words name no aspect. */
  opaque: Set<number>;
  /** Tokens from here on name no aspect ("looking at alternatives like …"). */
  aspectStop: number;
}

/** The phrase cues' compiled patterns, one list for every clause (findAll indexes a list once). */
const PHRASE_PATTERNS = PHRASES.map((p) => p.compiled);
const phraseMayStart = mayStartAt(PHRASE_PATTERNS);
const requestMayStart = mayStartAt(REQUESTS);

export function phraseCues(tokens: Token[], from: number, to: number): ClauseCues {
  const consumed = new Set<number>();
  const opaque = new Set<number>();
  const phrases: ClauseCues["phrases"] = [];
  let aspectStop = to;
  for (const m of findAll(PHRASE_PATTERNS, tokens, from, to)) {
    const cue = PHRASES[m.index]!;
    for (const i of m.consumed) consumed.add(i);
    if (cue.opaque) for (let i = m.start; i < m.end; i++) opaque.add(i);
    if (cue.valence !== 0) phrases.push({ at: m.start, valence: cue.valence });
    if (cue.rest) aspectStop = Math.min(aspectStop, m.start);
  }
  return { phrases, consumed, opaque, aspectStop };
}

/**
 * Whether tokens `[from, to)` may judge anything or ask for something. False means `clausePolarity` scores
 * them 0 and finds no request, whatever their cues and aspects: no word with a valence, no negator (a denied
 * verb is a missing capability), and no word a phrase cue or a request pattern can start with.
 */
export function mayJudge(tokens: Token[], from: number, to: number): boolean {
  for (let i = from; i < to; i++) {
    const t = tokens[i]!;
    if (valenceOf(t) !== 0 || NEGATORS.has(t.normal)) return true;
    if (phraseMayStart(tokens, i, from) || requestMayStart(tokens, i, from)) return true;
  }
  return false;
}

export function isRequest(tokens: Token[], from: number, to: number): boolean {
  return findAll(REQUESTS, tokens, from, to).length > 0;
}

const isBreak = (t: Token) => isPunct(t) || t.pos === "CCONJ" || t.normal === "but";

function isIntensifier(tokens: Token[], i: number): boolean {
  const t = tokens[i]!;
  if (INTENSIFIERS[t.normal] === undefined) return false;
  const next = tokens[i + 1];
  if (t.normal === "way" || t.normal === "pretty") return next !== undefined && ["ADJ", "ADV"].includes(next.pos);
  if (t.normal === "bit" || t.normal === "little") return tokens[i - 1]?.normal === "a";
  return t.pos === "ADV" || t.pos === "ADJ" || t.pos === "DET" || t.pos === "NOUN";
}

/**
 * Whether a negator that is not part of a phrase cue stands within the window before
 * `at`, or opens the clause as its subject ("nobody … seemed to care").
 */
function negatedAt(tokens: Token[], at: number, from: number, consumed: Set<number>): boolean {
  for (let j = at - 1, seen = 0; j >= from; j--, seen++) {
    const t = tokens[j]!;
    if (isBreak(t)) return false;
    if (consumed.has(j) || !NEGATORS.has(t.normal)) continue;
    if (seen < NEGATION_WINDOW) return true;
    if (SUBJECT_NEGATORS.has(t.normal) && (j === from || isBreak(tokens[j - 1]!))) return true;
  }
  return false;
}

function intensityAt(tokens: Token[], at: number, from: number): number {
  let scale = 1;
  for (let j = at - 1; j >= Math.max(from, at - 2); j--) {
    if (isBreak(tokens[j]!)) break;
    if (isIntensifier(tokens, j)) scale *= INTENSIFIERS[tokens[j]!.normal] ?? 1;
  }
  return scale;
}

/** The verb a negator denies, skipping adverbs and auxiliaries ("doesn't even load", "can't really find"). */
function deniedVerb(tokens: Token[], negator: number, to: number): number | null {
  for (let j = negator + 1; j < Math.min(to, negator + 4); j++) {
    const t = tokens[j]!;
    if (t.pos === "VERB") return j;
    if (t.pos !== "ADV" && t.pos !== "AUX" && t.pos !== "PART") return null;
  }
  return null;
}

export interface ClausePolarity {
  /** -1..1, three decimals. */
  score: number;
  request: boolean;
}

/**
 * The polarity of tokens `[from, to)`. `neutral` holds tokens that name an aspect
 * ("support", "quality"): they carry no valence however the general lexicon scores them.
 */
export function clausePolarity(tokens: Token[], from: number, to: number, cues: ClauseCues, neutral: Set<number>): ClausePolarity {
  if (isRequest(tokens, from, to)) return { score: 0, request: true };
  const hasLower = tokens.slice(from, to).some((t) => /\p{Ll}/u.test(t.text));
  let sum = 0;
  for (const p of cues.phrases) sum += p.valence * (negatedAt(tokens, p.at, from, cues.consumed) ? NEGATION_SCALE : 1);
  for (let i = from; i < to; i++) {
    const t = tokens[i]!;
    if (cues.consumed.has(i) || neutral.has(i) || isIntensifier(tokens, i)) continue;
    if (NEGATORS.has(t.normal) && t.normal !== "no" && t.normal !== "without") {
      const verb = deniedVerb(tokens, i, to);
      const v = verb === null ? undefined : tokens[verb]!;
      if (v && verb !== null && !cues.consumed.has(verb) && valenceOf(v) === 0 && !NEUTRAL_NEGATED_VERBS.has(v.lemma))
        sum += MISSING_CAPABILITY;
      continue;
    }
    let v = valenceOf(t);
    if (v === 0) continue;
    const before = tokens[i - 1];
    if (SPEED_ADVERBS.has(t.normal) && before && i - 1 >= from && valenceOf(before) < 0) v = -Math.abs(v) / 2;
    v *= intensityAt(tokens, i, from);
    if (hasLower && t.text.length >= 3 && /^[\p{Lu}]+$/u.test(t.text)) v *= 1.25;
    if (negatedAt(tokens, i, from, cues.consumed)) v *= NEGATION_SCALE;
    sum += v;
  }
  if (sum !== 0) {
    const bangs = tokens.slice(from, to).filter((t) => t.text === "!").length;
    sum += Math.sign(sum) * 0.1 * Math.min(3, bangs);
    const question = tokens.slice(from, to).some((t) => t.text === "?");
    if (question && sum > 0) sum *= 0.5;
  }
  const score = sum / Math.sqrt(sum * sum + 1);
  return { score: Math.round(score * 1000) / 1000, request: false };
}
