import { describe, expect, it } from "vitest";
import { aspectCandidates } from "../../src/insights/enrichment/aspects.js";
import { readComparison } from "../../src/insights/enrichment/comparisons.js";
import { clausePolarity, mayJudge, phraseCues } from "../../src/insights/enrichment/polarity.js";
import { tokenize } from "../../src/insights/enrichment/tokens.js";

const SENTENCES = [
  "Quick note: the export to PDF, which we use every week, doesn't even load on my iPad anymore.",
  "Please add recurring reminders and a dark mode, the calendar view is fine as it is.",
  "The settings page opens, the list scrolls and the sidebar shows the folders I created yesterday.",
  "Nobody on the team seemed to care, so we moved the tickets to a spreadsheet last month.",
  "It would be nice if the sync could run in the background, but the battery drain is terrible.",
  "Version 2.3.1 was installed from the store and the app was opened on Windows 11.",
];

describe("the clause reader's shortcuts", () => {
  it("finds every stretch mayJudge rules out neutral and without a request when read in full", () => {
    let ruledOut = 0;
    let stretches = 0;
    for (const sentence of SENTENCES) {
      const tokens = tokenize(sentence);
      expect(tokens).not.toBeNull();
      for (let from = 0; from < tokens!.length; from++) {
        for (let to = from + 1; to <= tokens!.length; to++) {
          stretches++;
          if (mayJudge(tokens!, from, to)) continue;
          ruledOut++;
          const cues = phraseCues(tokens!, from, to);
          const { neutral } = aspectCandidates(tokens!, from, to, cues);
          expect(clausePolarity(tokens!, from, to, cues, neutral)).toEqual({ score: 0, request: false });
        }
      }
    }
    // Both kinds of stretch occur: the check can fail, and it spares some reading.
    expect(ruledOut).toBeGreaterThan(50);
    expect(ruledOut).toBeLessThan(stretches);
  });

  it("reads a clause without a comparison word for churn alone", () => {
    expect(readComparison("I uninstalled it after the last update")).toEqual({ comparedWith: null, verdict: -1, churn: true });
    expect(readComparison("The sidebar shows my folders")).toEqual({ comparedWith: null, verdict: null, churn: false });
    expect(readComparison("Obsidian is much better than this")).toMatchObject({ comparedWith: "Obsidian", verdict: -1 });
    expect(readComparison("I switched to Bear last week")).toMatchObject({ comparedWith: "Bear", verdict: -1, churn: true });
    expect(readComparison("THIS IS WAY BETTER THAN Notion")).toMatchObject({ comparedWith: "Notion", verdict: 1 });
  });
});
