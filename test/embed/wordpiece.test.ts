import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { modelTokenizer } from "../../src/insights/embed/static.js";
import { normalizeBert, preTokenize } from "../../src/insights/embed/wordpiece.js";

/**
 * The WordPiece tokenizer gives the ids the reference tokenizer (the model's own, in Python) gave for
 * 299 sentences: STS Benchmark dev sentences and edge cases (accents, CJK, emoji, control and format
 * characters, long words, literal special tokens). The fixture is written by models/prepare/prepare.py.
 */
const fixture = JSON.parse(readFileSync(new URL("./fixtures/wordpiece.json", import.meta.url), "utf8")) as {
  max_tokens: number;
  cases: { text: string; ids: number[] }[];
};

describe("WordPiece tokenizer", () => {
  const tokenizer = modelTokenizer();

  it("matches the reference tokenizer's ids on every fixture sentence", () => {
    const mismatched = fixture.cases.filter((c) => JSON.stringify(tokenizer.encode(c.text, fixture.max_tokens)) !== JSON.stringify(c.ids));
    expect(mismatched.map((c) => c.text)).toEqual([]);
    expect(fixture.cases.length).toBeGreaterThan(250);
  });

  it("normalises as BERT uncased does", () => {
    expect(normalizeBert("Café ÉCOLE")).toBe("cafe ecole");
    expect(normalizeBert("a\u200bb\tc")).toBe("ab c");
    expect(normalizeBert("東京")).toBe(" 東  京 ");
    expect(preTokenize("don't stop, now!")).toEqual(["don", "'", "t", "stop", ",", "now", "!"]);
  });

  it("cuts to the token budget, [CLS] and [SEP] included", () => {
    const ids = tokenizer.encode("word ".repeat(400), 16);
    expect(ids).toHaveLength(16);
    expect(ids[0]).toBe(tokenizer.vocab.cls);
    expect(ids.at(-1)).toBe(tokenizer.vocab.sep);
    expect(tokenizer.pieces("word ".repeat(10), 4)).toHaveLength(4);
  });
});
