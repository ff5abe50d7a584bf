import { describe, expect, it } from "vitest";
import { buildPrompt, checkProse } from "../../src/insights/analysis/llm.js";

const quotes = [
  { number: 1, quote: "Sync keeps failing on my Android phone, I lose edits." },
  { number: 2, quote: "The new price is steep for what you get." },
];

describe("prose written by a language model", () => {
  it("keeps verbatim pieces of the quotes it was shown and citations of them", () => {
    const text = 'Sync is the top complaint [1]: one user says "keeps failing on my Android phone" [1]. Pricing follows [2].';
    expect(checkProse(text, quotes)).toEqual({ text, citations: 0, quotes: 0, changed: false });
  });

  it("drops a sentence holding an invented quote, and citations of quotes it was not shown", () => {
    const checked = checkProse("Sync fails [1]. One user wrote “sync deleted my whole notebook” [1]. Pricing is steep [2][7].", quotes);
    expect(checked.text).toBe("Sync fails [1]. Pricing is steep [2].");
    expect(checked).toMatchObject({ citations: 1, quotes: 1, changed: true });
  });

  it("does not take a short quoted word for a quote", () => {
    expect(checkProse('People call it "meh" [2].', quotes).quotes).toBe(0);
  });

  it("shows the model the themes with their numbered quotes", () => {
    const prompt = buildPrompt("What do people complain about?", [
      { title: "Sync — complaints (3 sources)", summary: "", evidence: quotes },
    ]);
    expect(prompt).toContain("Theme 1: Sync — complaints (3 sources)");
    expect(prompt).toContain('  [2] "The new price is steep for what you get."');
  });
});
