import { readFileSync } from "node:fs";

/**
 * Background text, what every corpus says (pure once loaded): a phrase is a topic of a corpus only
 * when the corpus uses it far more than background text does. Two backgrounds, built offline by
 * models/topic-background/ (sources and licences there):
 * - general English: each word's Zipf frequency (wordfreq; 3.0 = once in a million words), turned
 *   into the chance that a source of the corpus's mean length uses it;
 * - software issues: the share of about 3,600 GitHub issues of as many repositories that use each
 *   key phrase (the vocabulary every tracker shares: "error message", "steps", "latest version").
 * A phrase's background rate is the larger of the two; its lift is the corpus's rate over it.
 */
interface BackgroundFile {
  english: Record<string, number>;
  software: { documents: number; phrases: Record<string, number> };
}

let loaded: { english: Map<string, number>; software: Map<string, number>; documents: number } | undefined;

function background() {
  if (!loaded) {
    const file = JSON.parse(readFileSync(new URL("./background.json", import.meta.url), "utf8")) as BackgroundFile;
    loaded = {
      english: new Map(Object.entries(file.english)),
      software: new Map(Object.entries(file.software.phrases)),
      documents: file.software.documents,
    };
  }
  return loaded;
}

/** How often a word occurs in English text, per word (0 for words rarer than Zipf 3). */
export function englishFrequency(word: string): number {
  const zipf = background().english.get(word);
  return zipf === undefined ? 0 : 10 ** (zipf - 9);
}

/** Zipf frequency of an English word (0 when rarer than 3, or not English). */
export function zipfOf(word: string): number {
  return background().english.get(word) ?? 0;
}

/**
 * The share of background sources of `words` words each that use the phrase: for one word, from its
 * English frequency; for any phrase, the software issues' share (smoothed, so a phrase they never
 * use still has a small rate). Multi-word phrases take only the software rate: their English rate
 * is not known, and is small.
 */
export function backgroundRate(key: string, words: number): number {
  const bg = background();
  const english = key.includes(" ") ? 0 : 1 - Math.exp(-words * englishFrequency(key));
  const software = ((bg.software.get(key) ?? 0) + 0.5) / (bg.documents + 1);
  return Math.max(software, english);
}
