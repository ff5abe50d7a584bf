import { describe, expect, it } from "vitest";
import { readComparison } from "../../src/insights/enrichment/comparisons.js";
import { type OpinionSpan, opinionUnits, sliceCodePoints } from "../../src/insights/enrichment/opinions.js";

/**
 * Reading real feedback without a database: only the author's prose of an issue becomes units, each
 * unit says whether it is an opinion, a request, a bug or a question, and comparisons, switching and
 * avoidance say which side the product is on.
 */
const units = (text: string) => {
  const found = opinionUnits(text);
  for (const u of found) expect(sliceCodePoints(text, u.start, u.end)).toBe(u.text);
  return found;
};
const brief = (u: OpinionSpan) => [u.text, u.kind, u.label];

const BUG_REPORT = `### Describe the bug
<!-- A clear and concise description of what the bug is. -->
Exporting a large notebook crashes the app on Windows.

### To Reproduce
1. Open a notebook with 500 pages
2. Run \`export --pdf\`

\`\`\`
Traceback (most recent call last):
  File "export.py", line 3, in <module>
ValueError: page limit
\`\`\`

### Environment
- OS: Windows 11
- App version: 2.4.1
- Torch version: not installed

### Expected behavior
The export should finish.

- [x] I have searched the existing issues
`;

describe("an issue read as a product team reads it", () => {
  it("takes units from the author's prose only, never from headings, comments, code, traces, dumps or checklists", () => {
    const found = units(BUG_REPORT);
    const texts = found.map((u) => u.text);
    expect(texts).toContain("Exporting a large notebook crashes the app on Windows.");
    for (const markup of [
      "Describe the bug",
      "clear and concise",
      "Traceback",
      "ValueError",
      "export --pdf",
      "Windows 11",
      "2.4.1",
      "not installed",
      "searched the existing",
    ]) {
      expect(texts.join("\n")).not.toContain(markup);
    }
  });

  it("reads the bug description as a bug, steps as context, and the expected behaviour as unjudged", () => {
    const found = units(BUG_REPORT);
    expect(found.find((u) => u.text.startsWith("Exporting"))).toMatchObject({ kind: "bug", label: "negative" });
    expect(found.find((u) => u.text === "Open a notebook with 500 pages")).toMatchObject({ kind: "opinion", label: "neutral" });
    expect(found.find((u) => u.text === "The export should finish.")).toMatchObject({ kind: "bug", label: "neutral" });
  });

  it("reads what a feature-request template asks for as requests", () => {
    const found = units(
      "**Is your feature request related to a problem?**\nI lose track of recurring tasks.\n\n**Describe the solution you'd like**\nRecurring reminders that repeat weekly.\n",
    );
    expect(found.map(brief)).toContainEqual(["Recurring reminders that repeat weekly.", "request", "neutral"]);
  });

  it("marks questions and requests in plain reviews", () => {
    expect(units("How do I move my notes to a new phone?").map(brief)).toEqual([
      ["How do I move my notes to a new phone?", "question", "neutral"],
    ]);
    expect(units("An option to export to PDF would make it five stars").map((u) => u.kind)).toEqual(["request"]);
    expect(units("I really like this app, easy to use").map((u) => [u.kind, u.label])).toEqual([["opinion", "positive"]]);
    expect(units("The app crashes every time I open it.").map((u) => u.kind)).toEqual(["bug"]);
  });
});

describe("comparisons, switching and avoidance", () => {
  it.each([
    ["Obsidian is much better than this", "Obsidian", -1, false],
    ["This is way better than Notion.", "Notion", 1, false],
    ["I switched to Bear last month.", "Bear", -1, true],
    ["I'd stay away from this app, there are much nicer tools out there", null, -1, true],
    ["Best avoided until they fix the login", null, -1, true],
    ["Uninstalled after a week.", null, -1, true],
    ["Cancelled my subscription today.", null, -1, true],
    ["According to the benchmark, FFCV seems to be fastest", "FFCV", 0, false],
    ["The new version is better than the old one", null, null, false],
    ["It is better than nothing", null, null, false],
  ] as const)("%s", (text, comparedWith, verdict, churn) => {
    expect(readComparison(text)).toEqual({ comparedWith, verdict, churn });
  });

  it("makes the product the losing side of a comparison, and a rival's praise no praise of the product", () => {
    const [rival] = units("Obsidian is much better than this");
    expect(rival).toMatchObject({ label: "negative", comparedWith: "Obsidian", churn: false });
    expect(rival!.aspect).not.toBe("obsidian");
    expect(units("I'd stay away from this app, there are much nicer tools out there")[0]).toMatchObject({ label: "negative", churn: true });
    expect(units("Best avoided until they fix the login")[0]).toMatchObject({ label: "negative", churn: true });
    expect(units("According to the benchmark, FFCV seems to be fastest")[0]).toMatchObject({ label: "neutral", comparedWith: "FFCV" });
  });
});
