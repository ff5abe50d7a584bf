import { readFileSync } from "node:fs";
import { join } from "node:path";

/**
 * The bench's own judge of theme names, written from the rules and independent of the engine's code:
 * - a code identifier: snake_case, camelCase, dotted or `::` paths, call parentheses, flags (`--x`),
 *   file names with an extension, words glued to digits ("utf8", "v2");
 * - a word every corpus uses: a one-word name that general English uses at Zipf ≥ 5 (about once in
 *   every 100,000 words: "line", "time", "name", "test") per the English frequency list the models
 *   folder exports from wordfreq (models/topic-background/english.tsv).
 */
const ENGLISH = new Map(
  readFileSync(join(import.meta.dirname, "..", "..", "..", "models", "topic-background", "english.tsv"), "utf8")
    .split("\n")
    .map((l) => l.split("\t"))
    .filter((p) => p.length === 2)
    .map(([w, z]) => [w!, Number(z)]),
);

export function isCodeIdentifier(name: string): boolean {
  return (
    /\w_\w|\p{Ll}\p{Lu}|\w\.\w|::|\(\)|(?:^|\s)--?\w|\.\w{1,4}$/u.test(name) ||
    name.split(/\s+/).some((w) => /\p{L}/u.test(w) && /\p{N}/u.test(w))
  );
}

export function isCommonWord(name: string): boolean {
  const words = name.toLowerCase().split(/\s+/);
  return words.length === 1 && (ENGLISH.get(words[0]!) ?? 0) >= 5;
}

export function nameChecks(names: readonly string[]) {
  return { code: names.filter(isCodeIdentifier), common: names.filter(isCommonWord) };
}
