import { type Token, tokenize, valenceOf } from "../../enrichment/tokens.js";
import { STOP } from "../text.js";

/**
 * Key phrases of a statement (pure): the candidate names of what it talks about, in the statement's
 * own words. From wink-nlp's part-of-speech tags (enrichment/tokens.ts), two shapes, as in keyphrase
 * extraction since Hulth (2003) and TextRank (Mihalcea & Tarau, 2004):
 * - noun phrases: nouns and proper nouns with the classifying words before them ("parquet files",
 *   "dark mode", "battery drain", "night buses"), and each of their head-final tails ("files");
 * - verb–object phrases: a verb's lemma and the noun phrase it acts on ("load dataset", "export
 *   pdf"), which is how people name what they want to do.
 * Which of them are topics of a corpus is decided later, against background text (background.ts).
 *
 * Nothing that reads as code is part of a phrase: a token inside inline code (`…`), a URL, or a token
 * carrying a character prose words do not (`_ . / \ = < > # @ $ { } [ ] :`), mixing letters and digits
 * ("utf8", "x86") or written camelCase ("loadDataset"). Nor is an evaluative adjective ("great app"),
 * a stop word, or a number.
 */
export interface PhraseHit {
  /** Lower-cased words joined by one space (a verb by its lemma): the phrase's identity in a corpus. */
  key: string;
  /** The words as written. */
  surface: string;
  /** Said as a whole phrase here, not only as the tail of a longer one ("mode" in "dark mode" is a tail). */
  whole: boolean;
}

export const MAX_PHRASE_WORDS = 3;

const NOUNS = new Set(["NOUN", "PROPN"]);
const MODIFIERS = new Set(["NOUN", "PROPN", "ADJ"]);
/** Verbs that name no action on their object ("have", "get", "use" are frames; "add", "support", "fix" ask for it). */
const LIGHT_VERBS = new Set(
  "be have do get make take give let go come see say tell know think want need like try seem use find keep put set show look feel add support allow provide implement enable include fix".split(
    " ",
  ),
);
/** Adjectives that say how much or which, not what kind ("new", "other", "same", "whole"). */
const DETERMINING = new Set(
  "new old other same different whole entire full certain main various several many few much more most less least own next last previous first second current following above below such possible additional specific particular general simple basic real actual right wrong able unable sure similar single multiple separate latest recent".split(
    " ",
  ),
);

export function codeLike(token: string): boolean {
  if (/[_$@#\\/=<>{}[\]:|~^*]/u.test(token)) return true;
  if (/\p{L}\.\p{L}/u.test(token)) return true;
  if (/\p{L}/u.test(token) && /\p{N}/u.test(token)) return true;
  if (/\p{Ll}\p{Lu}/u.test(token)) return true;
  return false;
}

/** Words of conversation on a tracker or in a review that name nothing ("cc @someone", "thanks", "e.g."). */
const FILLERS = new Set(
  "cc fyi imo imho tl dr btw etc eg ie pls plz thanks thx hi hello hey lol ok okay yes yeah nope today yesterday tomorrow tonight".split(
    " ",
  ),
);

/** Whether a token can be a word of a phrase at all. */
function phraseWord(t: Token): boolean {
  if (t.type !== "word") return false;
  if (!/^\p{L}[\p{L}'’-]*$/u.test(t.text) || codeLike(t.text)) return false;
  const normal = t.normal;
  return normal.length >= 2 && !STOP.has(normal) && !FILLERS.has(normal) && !normal.includes("'");
}

/** Characters that glue a word into a path, a file name or a member access when written without spaces. */
const GLUE = new Set([".", "/", "\\", "::", ":", "_", "-", "(", ")", "=", "<", ">", "@", "#", "$", "%", "&", "*", "+", "~", "|"]);

/** A word written against `.`, `/`, `::`, `(`… with another word on the far side ("main.rs", "std::str", "foo()") is code. */
function gluedToCode(tokens: Token[], i: number): boolean {
  const t = tokens[i]!;
  const before = tokens[i - 1];
  const after = tokens[i + 1];
  if (before && before.end === t.start && GLUE.has(before.text)) return true;
  if (after && after.start === t.end && GLUE.has(after.text) && after.text !== "-") {
    const next = tokens[i + 2];
    if ((next && next.start === after.end && /^[\p{L}\p{N}_]/u.test(next.text)) || after.text === "(") return true;
  }
  return false;
}

const keyWord = (t: Token) => t.normal.replace(/’/gu, "'");

/** Every candidate phrase of a text, each key once (its first written form). */
export function keyPhrases(text: string): PhraseHit[] {
  const cleaned = text
    .replace(/\b(?:https?:\/\/|www\.)\S+/giu, " ")
    .replace(/\s+/gu, " ")
    .trim();
  const tokens = tokenize(cleaned) ?? [];
  // Tokens inside inline code are code.
  const usable: boolean[] = [];
  let inCode = false;
  tokens.forEach((t, i) => {
    if (t.text === "`" || t.text.includes("`")) {
      inCode = !inCode;
      usable.push(false);
      return;
    }
    usable.push(!inCode && phraseWord(t) && !gluedToCode(tokens, i));
  });
  const seen = new Map<string, PhraseHit>();
  const add = (words: Token[], verb?: Token, whole = true) => {
    const key = [...(verb ? [verb.lemma] : []), ...words.map(keyWord)].join(" ");
    const had = seen.get(key);
    if (!had) seen.set(key, { key, surface: [...(verb ? [verb.text] : []), ...words.map((w) => w.text)].join(" "), whole });
    else if (whole) had.whole = true;
  };
  for (let i = 0; i < tokens.length; i++) {
    const head = tokens[i]!;
    if (!usable[i] || !NOUNS.has(head.pos)) continue;
    // The longest run of modifiers before this noun, when the next token does not continue the phrase.
    const next = tokens[i + 1];
    if (next && usable[i + 1] && NOUNS.has(next.pos)) continue;
    let from = i;
    while (from > 0 && i - from + 1 < MAX_PHRASE_WORDS && usable[from - 1] && MODIFIERS.has(tokens[from - 1]!.pos)) from--;
    // Leading adjectives that judge or only determine are not part of the name.
    while (from < i) {
      const t = tokens[from]!;
      if (t.pos !== "ADJ" || (!DETERMINING.has(t.normal) && valenceOf(t) === 0)) break;
      from++;
    }
    const words = tokens.slice(from, i + 1);
    for (let k = 0; k < words.length; k++) add(words.slice(k), undefined, k === 0);
    // The verb acting on it: "load (the) dataset", "export to pdf" is not an object.
    let v = from - 1;
    while (v >= 0 && tokens[v]!.pos === "DET") v--;
    const verb = tokens[v];
    // A verb that judges ("love", "hate") says how, not what is done.
    if (verb && verb.pos === "VERB" && usable[v] && !LIGHT_VERBS.has(verb.lemma) && valenceOf(verb) === 0) {
      add(words.slice(-Math.min(words.length, 2)), verb);
      if (words.length > 1) add(words.slice(-1), verb);
    }
  }
  return [...seen.values()];
}
