import { describe, expect, it } from "vitest";
import { opinionUnits } from "../../src/insights/enrichment/opinions.js";
import { tokenize } from "../../src/insights/enrichment/tokens.js";

/** The tokens of `sentence` marked as `entity`, joined by spaces. */
function marked(sentence: string, entity: "MONEY" | "DURATION"): string[] {
  const tokens = tokenize(sentence);
  if (!tokens) throw new Error(`no tokens for ${sentence}`);
  const spans: string[] = [];
  let run: string[] = [];
  for (const t of [...tokens, null]) {
    if (t && t.entity === entity) run.push(t.text);
    else if (run.length > 0) {
      spans.push(run.join(" "));
      run = [];
    }
  }
  return spans;
}

describe("amounts of money and spans of time", () => {
  it("marks a currency with its number, a number with a currency word or code, and nothing else", () => {
    expect(marked("It costs $10 a month now.", "MONEY")).toEqual(["$ 10"]);
    expect(marked("I paid 10 $ for nothing.", "MONEY")).toEqual(["10 $"]);
    expect(marked("Not worth 5 dollars.", "MONEY")).toEqual(["5 dollars"]);
    expect(marked("They charge USD 20 for export.", "MONEY")).toEqual(["USD 20"]);
    // A weight is not money.
    expect(marked("I lost 20 pounds with it.", "MONEY")).toEqual([]);
    expect(marked("Version 10 fixed it.", "MONEY")).toEqual([]);
  });

  it("marks a unit of time with its quantity and an approximation before the quantity", () => {
    expect(marked("It takes around 10 minutes to load.", "DURATION")).toEqual(["around 10 minutes"]);
    expect(marked("I waited a few days for an answer.", "DURATION")).toEqual(["a few days"]);
    expect(marked("Support answered within half an hour.", "DURATION")).toEqual(["half an hour"]);
    expect(marked("I have used it for more than a year.", "DURATION")).toEqual(["more than a year"]);
    expect(marked("Every day it crashes.", "DURATION")).toEqual(["day"]);
    // An approximation alone is no quantity: "over" stays out of "over days".
    expect(marked("It went on over days.", "DURATION")).toEqual(["days"]);
  });

  it("reads the cues that name them: a long wait is a complaint, a price names pricing, a weight does not", () => {
    const [wait] = opinionUnits("When I open any other screen it takes around 2-3 mins to load.");
    expect(wait).toMatchObject({ label: "negative" });
    const [price] = opinionUnits("Not worth 5 dollars.");
    expect(price).toMatchObject({ aspect: "pricing", label: "negative" });
    const [weight] = opinionUnits("I lost 20 pounds with it.");
    expect(weight?.terms).not.toContain("pricing");
  });
});
