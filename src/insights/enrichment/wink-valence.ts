import { readFileSync } from "node:fs";
import { englishModel, winkInstance } from "./wink-model.js";

/**
 * wink-nlp's lexicon valence of single words (−1…1), as a table. The engine reads it for one word at a
 * time (tokens.ts, `valenceOf`); asking wink-nlp meant a document per word and its `sentiment` pipe run
 * over every sentence the engine reads. The table holds every word of the English model's lexicon whose
 * one-word document has a non-zero sentiment; a word outside the lexicon has none (checked over every
 * distinct word of the labelled feedback sets). `wink-valence.json` beside this file is written by
 * `npx tsx scripts/wink-valence.ts` from the installed model; a test compares it with the model, so an
 * upgrade of the model that changes a valence fails it.
 */
export type ValenceTable = ReadonlyMap<string, number>;

/** Words longer than this are never looked up (the engine's own bound). */
export const MAX_VALENCE_WORD = 40;

/** The valence of every word of the installed English model's lexicon that has one, computed by wink-nlp (about 0.5 s). */
export function computeWinkValence(): Record<string, number> {
  const nlp = winkInstance(["sentiment"]);
  const out: Record<string, number> = {};
  for (const word of englishModel().core().features.lexeme.list) {
    if (typeof word !== "string" || word.length > MAX_VALENCE_WORD) continue;
    const valence = Number(nlp.readDoc(word).out(nlp.its.sentiment)) || 0;
    if (valence !== 0) out[word] = valence;
  }
  return out;
}

let loaded: ValenceTable | undefined;

/** The committed table (about 7,800 words), read once. */
export function winkValence(): ValenceTable {
  loaded ??= new Map(
    Object.entries(JSON.parse(readFileSync(new URL("./wink-valence.json", import.meta.url), "utf8")) as Record<string, number>),
  );
  return loaded;
}
