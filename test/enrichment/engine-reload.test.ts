import { afterEach, describe, expect, it } from "vitest";
import { opinionUnits } from "../../src/insights/enrichment/opinions.js";
import { setEngineReload, tokenize } from "../../src/insights/enrichment/tokens.js";

const SENTENCES = [
  "The sync keeps failing since v2.3.1 and support never answers.",
  "I'd love an option to export to PDF, it would make this five stars!",
  "Obsidian is much better than this; I switched last week.",
];

describe("the tokenizer's engine, loaded anew", () => {
  afterEach(() => setEngineReload(0));

  it("reads the same after each of many loads as before them", () => {
    const before = SENTENCES.map((s) => JSON.stringify(opinionUnits(s)));
    // Every sentence passes the bound, so every sentence is read by a newly loaded engine: twenty loads and more.
    setEngineReload(1);
    for (let round = 0; round < 8; round++) expect(SENTENCES.map((s) => JSON.stringify(opinionUnits(s)))).toEqual(before);
    setEngineReload(0);
    expect(SENTENCES.map((s) => JSON.stringify(opinionUnits(s)))).toEqual(before);
  });

  it("keeps the tokens' verbatim offsets across loads", () => {
    setEngineReload(1);
    for (const sentence of SENTENCES) {
      const tokens = tokenize(sentence);
      expect(tokens).not.toBeNull();
      expect(tokens!.map((t) => sentence.slice(t.start, t.end))).toEqual(tokens!.map((t) => t.text));
      expect(tokens!.at(-1)!.end).toBe(sentence.length);
    }
  });
});
