import { ASPECT_LEXICON, ATTRIBUTE_HEADS, GENERIC_NOUNS, NOUN_ONLY_TERMS, WHOLE_PRODUCT_NOUNS } from "./aspect-lexicon.js";
import { INTENSIFIERS, VALENCE } from "./feedback-cues.js";
import type { ClauseCues } from "./polarity.js";
import { indexIn, isPunct, type Token, valenceOf } from "./tokens.js";

/**
 * What a clause is about. Candidates come from the curated lexicon (a term that names an
 * aspect, a cue that implies one, or an amount of money: pricing) and from noun phrases
 * (runs of nouns with their -ing or classifier modifiers, lemmatised head: "web clipper",
 * "onboarding flow"), as in Hu & Liu's feature-based summarisation, where features are
 * the nouns and noun phrases people comment on. Each candidate is ranked by what it is
 * (named by the lexicon > the subject's noun phrase > implied by a cue > other noun phrase > the product as a
 * whole) and where it stands (the subject, before the first verb, ranks up; a noun inside
 * a prepositional phrase, "on my iPad", ranks down).
 */
export const OVERALL = "overall";

export interface AspectCandidate {
  /** A lexicon aspect's canonical name, a noun phrase, or OVERALL. */
  aspect: string;
  score: number;
  /** First token. */
  at: number;
  lexicon: boolean;
  /** Names the product as a whole. */
  whole: boolean;
  /** Before the first verb and outside prepositional phrases (for the product as a whole: also what the subject is said to be). */
  subject: boolean;
}

interface LexiconHit {
  aspect: string;
  cue: boolean;
}

const MAX_PHRASE_WORDS = 4;
/** Words as a lexicon key: hyphens as spaces, one space between words (the common case needs no rewriting). */
const keyOf = (words: string[]) => {
  const joined = words.join(" ");
  return /-|\s\s|^\s|\s$|[^\S ]/.test(joined) ? joined.replace(/-/g, " ").replace(/\s+/g, " ").trim() : joined;
};

const LEXICON = (() => {
  const index = new Map<string, LexiconHit>();
  for (const [aspect, entry] of Object.entries(ASPECT_LEXICON)) {
    for (const term of entry.terms) index.set(keyOf([term]), { aspect, cue: false });
    for (const cue of entry.cues ?? []) if (!index.has(keyOf([cue]))) index.set(keyOf([cue]), { aspect, cue: true });
  }
  return index;
})();

/** The lexicon aspect a phrase or word names by one of its terms, not by a cue ("price" → pricing; "run" → none). */
export function namedLexiconAspect(phrase: string): string | null {
  const hit = LEXICON.get(keyOf([phrase.toLowerCase()]));
  return hit && !hit.cue ? hit.aspect : null;
}

/** The lexicon aspect a phrase or word names, if any ("battery life" → battery, "price" → pricing). */
export function lexiconAspect(phrase: string): string | null {
  const hit = LEXICON.get(keyOf([phrase.toLowerCase()]));
  return hit ? hit.aspect : null;
}

/** Classifier adjectives that are part of a feature's name ("offline mode", "dark mode", "mobile app"). */
const CLASSIFIERS = new Set([
  "offline",
  "online",
  "mobile",
  "dark",
  "desktop",
  "digital",
  "wireless",
  "external",
  "internal",
  "local",
  "social",
  "public",
  "private",
  "automatic",
  "manual",
  "custom",
  "default",
  "native",
  "visual",
  "physical",
]);
const NOUNISH = new Set(["NOUN", "PROPN"]);
const WORD = /^[\p{L}][\p{L}\p{N}'’-]*$/u;
/** Pronoun contractions wink-nlp keeps whole and tags as nouns ("I'm", "it's", "Im"). */
const CONTRACTION =
  /^(?:(?:i|you|we|they|he|she|it|that|there|here|what|who|let)['’]\p{L}+|im|ive|id|ill|youre|theyre|thats|theres|whats|lets|dont|cant|wont|doesnt|isnt|didnt)$/u;

/** Whether some index in `[from, to)` passes `test`. */
const someIn = (from: number, to: number, test: (j: number) => boolean) => {
  for (let j = from; j < to; j++) if (test(j)) return true;
  return false;
};

const joined = (tokens: Token[], i: number) => i > 0 && tokens[i]!.start === tokens[i - 1]!.end;

/** Word tokens from `i` on, hyphens read as spaces: [token index, …] for up to MAX_PHRASE_WORDS words. */
function wordRun(tokens: Token[], i: number, stop: number): number[] {
  const run: number[] = [];
  for (let j = i; j < stop && run.length < MAX_PHRASE_WORDS; j++) {
    const t = tokens[j]!;
    if (t.text === "-" && joined(tokens, j) && j + 1 < stop && joined(tokens, j + 1)) continue;
    if (isPunct(t) || (t.type !== "word" && t.type !== "number")) break;
    run.push(j);
  }
  return run;
}

/** The first word of every lexicon key: a phrase can start only at a token whose form is one of them. */
const FIRST_WORDS = new Set([...LEXICON.keys()].map((k) => k.split(" ")[0]!));
const startsKey = (form: string) => FIRST_WORDS.has(/[-\s]/.test(form) ? keyOf([form]).split(" ")[0]! : form);

function lexiconHits(tokens: Token[], from: number, stop: number, skip: Set<number>): { start: number; end: number; hit: LexiconHit }[] {
  const hits: { start: number; end: number; hit: LexiconHit }[] = [];
  for (let i = from; i < stop; i++) {
    if (skip.has(i)) continue;
    // Every key tried below opens with the normal form, the lemma or the written form of token i.
    const t = tokens[i]!;
    t.opensAspectKey ??= startsKey(t.normal) || startsKey(t.lemma) || startsKey(t.text.toLowerCase());
    if (!t.opensAspectKey) continue;
    const run = wordRun(tokens, i, stop);
    // Phrases end before the first token another cue took.
    let clean = run.findIndex((j) => skip.has(j));
    if (clean < 0) clean = run.length;
    for (let n = clean; n >= 1; n--) {
      const idx = run.slice(0, n);
      const normals = idx.map((j) => tokens[j]!.normal);
      const last = tokens[idx[n - 1]!]!;
      // The form as written too: wink-nlp's normal form respells some words ("aesthetically" → "esthetically").
      const hit =
        LEXICON.get(keyOf(normals)) ??
        LEXICON.get(keyOf([...normals.slice(0, -1), last.lemma])) ??
        LEXICON.get(keyOf(idx.map((j) => tokens[j]!.lemma))) ??
        LEXICON.get(keyOf(idx.map((j) => tokens[j]!.text.toLowerCase())));
      if (!hit) continue;
      const head = tokens[idx[0]!]!;
      if (n === 1 && !hit.cue && !NOUNISH.has(head.pos) && (NOUN_ONLY_TERMS.has(head.lemma) || !["VERB", "ADJ", "X"].includes(head.pos)))
        continue;
      hits.push({ start: idx[0]!, end: idx[n - 1]! + 1, hit });
      i = idx[n - 1]!;
      break;
    }
  }
  return hits;
}

/** Noun phrases: [start, end) token ranges of noun runs with their classifier or -ing modifiers. */
function nounPhrases(tokens: Token[], from: number, stop: number, skip: Set<number>): [number, number][] {
  const out: [number, number][] = [];
  let i = from;
  while (i < stop) {
    const t = tokens[i]!;
    const modifier =
      !skip.has(i) &&
      i + 1 < stop &&
      NOUNISH.has(tokens[i + 1]!.pos) &&
      ((t.pos === "VERB" && t.normal.endsWith("ing")) || (t.pos === "ADJ" && CLASSIFIERS.has(t.normal)));
    if (!modifier && !(NOUNISH.has(t.pos) && !skip.has(i))) {
      i++;
      continue;
    }
    let j = i + 1;
    for (;;) {
      const next = tokens[j];
      if (!next || j >= stop || skip.has(j)) break;
      // A capitalised word after a proper noun continues the name ("Apple Watch").
      const name = tokens[j - 1]!.pos === "PROPN" && next.type === "word" && /^\p{Lu}/u.test(next.text);
      if (NOUNISH.has(next.pos) || name) j++;
      else if (next.text === "-" && joined(tokens, j) && j + 1 < stop && joined(tokens, j + 1) && tokens[j + 1]!.type === "word") j += 2;
      else break;
    }
    // A verb tagged as a plural noun before an adverb ("the dashboard loads slowly") is no part of the phrase.
    const after = tokens[j];
    if (after?.pos === "ADV" && /ly$/.test(after.normal) && INTENSIFIERS[after.normal] === undefined && /s$/.test(tokens[j - 1]!.normal))
      if (tokens[j - 1]!.pos === "NOUN") j--;
    if (j > i) out.push([i, j]);
    i = Math.max(j, i + 1);
  }
  return out;
}

/**
 * The preposition that governs the phrase whose first token is `start` ("on my Android
 * phone", "inside PDF search"), skipping determiners, possessives, numbers, adjectives and
 * the nouns of a compound; null when the phrase does not sit in a prepositional phrase.
 */
function governingPreposition(tokens: Token[], start: number, from: number): number | null {
  for (let j = start - 1; j >= from; j--) {
    const t = tokens[j]!;
    if (["DET", "PRON", "NUM", "ADJ", "NOUN", "PROPN"].includes(t.pos) || t.text === "-" || t.type === "currency") continue;
    return t.pos === "ADP" || (t.pos === "PART" && t.normal === "to") || t.pos === "SCONJ" ? j : null;
  }
  return null;
}

function phraseName(tokens: Token[], start: number, end: number): { name: string; head: Token } | null {
  const words: string[] = [];
  let head: Token | null = null;
  for (let j = start; j < end; j++) {
    const t = tokens[j]!;
    if (t.text === "-") continue;
    const last = j === end - 1;
    // Names keep their form ("Windows" is not a window).
    const word = last && t.pos !== "PROPN" ? t.lemma : t.normal;
    if (!WORD.test(word)) return null;
    words.push(word);
    if (last) head = t;
  }
  if (!head || head.lemma.length < 3 || GENERIC_NOUNS.has(head.lemma) || words.some((w) => CONTRACTION.test(w))) return null;
  // An opinion word is not an aspect ("Love it!" tags "love" as a noun).
  if (valenceOf(head) !== 0) return null;
  return { name: words.join(" "), head };
}

/**
 * The aspect candidates of tokens `[from, to)`, best first, and the tokens that name an
 * aspect without judging it (their general-lexicon valence is ignored: "support" and
 * "quality" are not praise).
 */
export function aspectCandidates(
  tokens: Token[],
  from: number,
  to: number,
  cues: ClauseCues,
): { candidates: AspectCandidate[]; neutral: Set<number> } {
  const stop = Math.min(to, cues.aspectStop);
  const firstVerb = indexIn(tokens, from, to, (t) => t.pos === "VERB" || t.pos === "AUX");
  const verbAt = firstVerb < 0 ? to : firstVerb;
  const neutral = new Set<number>();
  const found: AspectCandidate[] = [];
  const place = (start: number, base: number) => {
    const prep = governingPreposition(tokens, start, from);
    // "quality of the food" is about the food: what follows "of" after an attribute takes its place.
    const ofAttribute = prep !== null && tokens[prep]!.normal === "of" && ATTRIBUTE_HEADS.has(tokens[prep - 1]?.lemma ?? "");
    const anchor = ofAttribute ? (governingPreposition(tokens, prep, from) ?? -1) : prep;
    const subject = (anchor === null || anchor < 0) && (ofAttribute ? prep : start) < verbAt;
    return { score: base + (subject ? 0.5 : 0) - (anchor !== null && anchor >= 0 ? 1 : 0), subject, prep: anchor !== null && anchor >= 0 };
  };
  const attributeOf = (end: number) => ATTRIBUTE_HEADS.has(tokens[end - 1]!.lemma) && tokens[end]?.normal === "of";

  const covered = new Set<number>();
  for (const { start, end, hit } of lexiconHits(tokens, from, stop, cues.opaque)) {
    for (let j = start; j < end; j++) {
      covered.add(j);
      const t = tokens[j]!;
      if (!hit.cue && VALENCE[t.normal] === undefined && VALENCE[t.lemma] === undefined) neutral.add(j);
    }
    // A cue implies a quality ("slow": performance) and gives way to the thing the clause is
    // about: below a named aspect and below a noun phrase that is the subject ("the editor lags"
    // is about the editor), above one that is only an object ("it freezes when I attach a photo").
    const { score, subject } = place(start, hit.cue ? 2.25 : 3);
    found.push({ aspect: hit.aspect, score, at: start, lexicon: true, whole: false, subject });
  }
  for (let j = from; j < stop; j++) {
    if (covered.has(j) || cues.opaque.has(j)) continue;
    const t = tokens[j]!;
    if (t.entity === "MONEY" || t.type === "currency") {
      found.push({ aspect: "pricing", score: 3, at: j, lexicon: true, whole: false, subject: j < verbAt });
      while (j + 1 < stop && (tokens[j + 1]!.entity === "MONEY" || tokens[j + 1]!.type === "number")) j++;
    }
  }

  for (const [start, end] of nounPhrases(tokens, from, stop, cues.opaque)) {
    if (someIn(start, end, (j) => covered.has(j))) {
      // The lexicon names this phrase's aspect; an attribute phrase gives way to what follows "of".
      if (attributeOf(end)) for (const c of found) if (c.at >= start && c.at < end) c.score -= 1.5;
      continue;
    }
    const named = phraseName(tokens, start, end);
    if (!named || attributeOf(end)) continue;
    const { score, subject, prep } = place(start, 2);
    if (WHOLE_PRODUCT_NOUNS.has(named.head.lemma)) {
      // The product is what the clause judges when it is the subject, or what the subject is
      // said to be ("this is a great hotel"), or the clause has no verb ("Great hotel!").
      const copula = firstVerb >= 0 && tokens[firstVerb]!.lemma === "be" && firstVerb > from && start > firstVerb;
      found.push({
        aspect: OVERALL,
        score: 0.5,
        at: start,
        lexicon: false,
        whole: true,
        subject: !prep && (subject || copula || firstVerb < 0),
      });
      continue;
    }
    // A name (a device, a competitor) outside the subject is rarely what the clause judges.
    const properOnly = !someIn(start, end, (j) => tokens[j]!.pos !== "PROPN" && tokens[j]!.text !== "-");
    found.push({ aspect: named.name, score: score - (properOnly && !subject ? 0.5 : 0), at: start, lexicon: false, whole: false, subject });
  }

  found.sort((a, b) => b.score - a.score || a.at - b.at);
  const seen = new Set<string>();
  const candidates = found.filter((c) => !seen.has(c.aspect) && seen.add(c.aspect));
  return { candidates, neutral };
}
