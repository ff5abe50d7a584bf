import { lexicon as VADER_WORDS } from "vader-sentiment/src/vader_lexicon.js";
import type winkNLPType from "wink-nlp";
import { markAmounts } from "./amounts.js";
import { VALENCE, wordTable } from "./feedback-cues.js";
import { winkInstance } from "./wink-model.js";
import { MAX_VALENCE_WORD, winkValence } from "./wink-valence.js";

const VADER_LEXICON = wordTable(VADER_WORDS);

/**
 * Tokens of one sentence from wink-nlp (English lite model): the verbatim text, the
 * normal (lower-case, contractions expanded: "n't" → "not", "'d" → "would") and lemma
 * forms, the universal part-of-speech tag, an amount's entity type (MONEY or DURATION, amounts.ts)
 * and UTF-16 offsets into the sentence. wink-nlp's tokenisation is lossless (each
 * token's preceding whitespace plus its text rebuild the input exactly), which is what
 * lets clauses be cut as verbatim slices.
 */
export interface Token {
  text: string;
  normal: string;
  lemma: string;
  pos: string;
  /** wink-nlp token type: word, number, punctuation, emoji, emoticon, currency, url, … */
  type: string;
  entity: string | null;
  start: number;
  end: number;
  /** The token's valence once `valenceOf` has read it (a clause's words are scored again for each cut tried). */
  valence?: number;
  /** Whether the aspect lexicon has a key opening with one of the token's forms, once aspects.ts has asked. */
  opensAspectKey?: boolean;
}

/**
 * wink-nlp with its English model, loaded on first use: the model takes about 45 MB resident, which
 * a process that never reads text (the web process, for most of its routes) does not pay.
 */
type Nlp = ReturnType<typeof winkNLPType>;
let loaded: Nlp | undefined;
/**
 * wink-nlp keeps every word it has not seen before (a version number, a path, a typo) in its instance's
 * lexicon for good, about 120 bytes each (0.7 MB per million characters of the labelled feedback sets; a
 * million distinct unknown words, 122 MB): a worker reading millions of rows would grow until its heap limit.
 * So the instance is loaded anew once it has read this many characters (about 28,000 rows of 565
 * characters; a load takes about 60 ms, 0.2 % of the analysis): at most about 11 MB of such words on the
 * labelled sets, 128 MB if every word were new (`bench/enrichment/engine-memory.ts`). A word's first
 * reading can differ from later ones (wink-nlp splits "visitor's" while it does not know the form; 12 of
 * 41,316 units of the labelled sets differ between a first and a second pass), so a new instance reads like
 * the process's first one did.
 */
export const ENGINE_RELOAD_CHARS = 16 * 1024 * 1024;
let reloadAfter = ENGINE_RELOAD_CHARS;
let readSinceLoad = 0;

/** Sets how many characters the engine reads before it is loaded anew (tests and benches; 0 restores the default). */
export function setEngineReload(chars: number): void {
  reloadAfter = chars > 0 ? chars : ENGINE_RELOAD_CHARS;
}

function engine(): Nlp {
  if (readSinceLoad > reloadAfter) {
    loaded = undefined;
    readSinceLoad = 0;
  }
  if (!loaded) {
    // Only what is read: tags and lemmas ("pos"). No "sentiment": a word's lexicon valence comes from a table
    // (wink-valence.ts) rather than a pass over every sentence. No "ner": the two entities the cues read are found
    // by amounts.ts, at about a twelfth of the units' cost less. No "sbd" or "negation": a document is one sentence
    // already, and negation is the clause scorer's (polarity.ts); without them the units of the labelled sets are
    // the same, at about 5% less.
    loaded = winkInstance(["pos"]);
  }
  return loaded;
}

/** The tokens of a sentence, or null if wink-nlp's tokens do not rebuild it exactly. */
export function tokenize(sentence: string): Token[] | null {
  // A capitalised first word is tagged as a proper noun ("Terrible pricing …"); tag it
  // lower-cased (but not "I", "I'm": lower-cased, wink-nlp no longer knows them).
  const lower = /^\p{Lu}\p{Ll}/u.test(sentence) ? sentence.charAt(0).toLowerCase() + sentence.slice(1) : sentence;
  const nlp = engine();
  readSinceLoad += sentence.length;
  const its = nlp.its;
  const doc = nlp.readDoc(lower);
  const tokens = doc.tokens();
  const values = tokens.out(its.value) as string[];
  const spaces = tokens.out(its.precedingSpaces) as string[];
  const normals = tokens.out(its.normal) as string[];
  // The typings of `its.lemma` do not match `out()`; at run time it is a token helper like the others.
  const lemmas = tokens.out(its.lemma as unknown as typeof its.normal) as string[];
  const pos = tokens.out(its.pos) as string[];
  const types = tokens.out(its.type) as string[];
  const out: Token[] = [];
  let at = 0;
  for (let i = 0; i < values.length; i++) {
    at += (spaces[i] ?? "").length;
    const value = values[i] ?? "";
    const start = at;
    at += value.length;
    out.push({
      text: sentence.slice(start, at),
      normal: (normals[i] ?? value).toLowerCase(),
      lemma: (lemmas[i] ?? value).toLowerCase(),
      pos: pos[i] ?? "X",
      type: types[i] ?? "word",
      entity: null,
      start,
      end: at,
      valence: undefined,
      opensAspectKey: undefined,
    });
  }
  if (at !== sentence.length || out.some((t, i) => t.text.toLowerCase() !== (values[i] ?? "").toLowerCase())) return null;
  markAmounts(out);
  return out;
}

/** wink-nlp's lexicon valence of one word (-1..1; 0 when it has none). */
function lexiconValence(word: string): number {
  return word.length > MAX_VALENCE_WORD ? 0 : (winkValence().get(word) ?? 0);
}

/**
 * The valence of a token: the product-feedback lexicon (feedback-cues.ts) first, then
 * wink-nlp's lexicon, by form and then by lemma. A few words carry valence only as
 * verbs ("like", "work": "I like it", "it works", but not "like a charm", "at work").
 */
export function valenceOf(token: Token): number {
  token.valence ??= valenceOfToken(token);
  return token.valence;
}

function valenceOfToken(token: Token): number {
  if ((token.lemma === "like" || token.lemma === "work") && token.pos !== "VERB") return 0;
  if (token.pos === "INTJ" && token.normal === "well") return 0;
  const own = VALENCE[token.normal] ?? VALENCE[token.lemma];
  if (own !== undefined) return own;
  if (token.type !== "word" && token.type !== "emoji" && token.type !== "emoticon") return 0;
  const byForm = lexiconValence(token.normal);
  if (byForm !== 0) return byForm;
  const byLemma = token.lemma !== token.normal ? lexiconValence(token.lemma) : 0;
  return byLemma !== 0 ? byLemma : vaderValence(token);
}

/** Parts of speech that carry a judgement; nouns are mostly what is judged ("attachment", "support"). */
const JUDGING_POS = new Set(["ADJ", "ADV", "VERB", "INTJ"]);

/**
 * A word wink-nlp's list does not rate, from VADER's larger lexicon (−4…4, scaled to wink's
 * −1…1), for adjectives, adverbs, verbs and interjections only: VADER rates nouns in their
 * everyday sense ("attachment" is affection), which product feedback rarely means.
 */
function vaderValence(token: Token): number {
  if (!JUDGING_POS.has(token.pos)) return 0;
  const raw = VADER_LEXICON[token.normal] ?? VADER_LEXICON[token.lemma];
  return raw === undefined ? 0 : Math.max(-1, Math.min(1, raw / 4));
}

export const isWord = (t: Token) => t.type === "word" || t.type === "number";
export const isPunct = (t: Token) => t.pos === "PUNCT" || t.type === "punctuation";

/** The first token index in `[from, to)` that satisfies `test`, or -1 (reads only that range). */
export function indexIn(tokens: Token[], from: number, to: number, test: (t: Token) => boolean): number {
  for (let i = Math.max(0, from); i < Math.min(to, tokens.length); i++) if (test(tokens[i]!)) return i;
  return -1;
}
