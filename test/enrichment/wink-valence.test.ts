import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { tokenize, valenceOf } from "../../src/insights/enrichment/tokens.js";
import { winkInstance } from "../../src/insights/enrichment/wink-model.js";
import { computeWinkValence, MAX_VALENCE_WORD, winkValence } from "../../src/insights/enrichment/wink-valence.js";

const sentimentOnly = winkInstance(["sentiment"]);
/** What the engine asked wink-nlp before the table: the sentiment of a one-word document. */
const askWink = (word: string) =>
  word.length > MAX_VALENCE_WORD ? 0 : Number(sentimentOnly.readDoc(word).out(sentimentOnly.its.sentiment)) || 0;

describe("wink-nlp's word valences as a table", () => {
  it("holds exactly what the installed model gives every word of its lexicon", () => {
    const committed = JSON.parse(readFileSync(new URL("../../src/insights/enrichment/wink-valence.json", import.meta.url), "utf8"));
    expect(committed).toEqual(computeWinkValence());
    expect(winkValence().size).toBeGreaterThan(5000);
  });

  it("gives each word of real feedback the valence wink-nlp gives it, words outside the lexicon included", () => {
    const sentences = [
      "Absolutely love this app :) but the sync is horrible and keeps crashing 😡",
      "kubectl apply fails with ECONNREFUSED after upgrading to v2.3.1, sooo annoying!!!",
      "The constructor of __proto__ toString hasOwnProperty is not a valence word.",
      "Gooood job, thx 👍 — best tracker I've used; wouldn't recommend the widget though.",
    ];
    let words = 0;
    for (const sentence of sentences) {
      for (const token of tokenize(sentence) ?? []) {
        for (const word of new Set([token.normal, token.lemma])) {
          words++;
          expect([word, winkValence().get(word) ?? 0]).toEqual([word, askWink(word)]);
        }
      }
    }
    expect(words).toBeGreaterThan(60);
  });

  it("reads a prototype key as a word without a valence", () => {
    const [token] = tokenize("constructor") ?? [];
    expect(token).toBeDefined();
    expect(valenceOf(token!)).toBe(0);
    expect(winkValence().get("love")).toBeGreaterThan(0);
    expect(winkValence().get("horrible")).toBeLessThan(0);
  });
});
