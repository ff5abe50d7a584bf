import { describe, expect, it } from "vitest";
import { issueKeywordKind, reviewKeywordKind, starsPolarity } from "../../bench/quality/feedback/baselines.js";
import {
  convertReviewRow,
  ISSUE_LABELS,
  issueSplitOf,
  parseCsv,
  REVIEW_LABELS,
  readIssues,
  readReviews,
  SPLITS,
  splitOf,
} from "../../bench/quality/feedback/data/convert.js";
import { classScores, confusionMatrix, formatConfusion, macroF1, score } from "../../bench/quality/feedback/metrics.js";

type L = "a" | "b" | "c";
const LABELS: readonly L[] = ["a", "b", "c"];

/**
 * A hand-made confusion (gold rows × predicted columns):
 *        a  b  c
 *   a    3  1  0     support 4
 *   b    1  2  1     support 4
 *   c    0  0  0     support 0, predicted once (precision 0, recall 0)
 */
const gold: L[] = ["a", "a", "a", "a", "b", "b", "b", "b"];
const predicted: L[] = ["a", "a", "a", "b", "a", "b", "b", "c"];

describe("feedback metrics", () => {
  it("builds the confusion matrix gold × predicted", () => {
    const m = confusionMatrix(LABELS, gold, predicted);
    expect(m).toEqual({ a: { a: 3, b: 1, c: 0 }, b: { a: 1, b: 2, c: 1 }, c: { a: 0, b: 0, c: 0 } });
    expect(() => confusionMatrix(LABELS, ["a"], [])).toThrow();
    expect(() => confusionMatrix(LABELS, ["a"], ["z" as L])).toThrow();
  });

  it("computes precision, recall and F1 per class", () => {
    const m = confusionMatrix(LABELS, gold, predicted);
    const a = classScores(m, LABELS, "a");
    expect(a.precision).toBeCloseTo(3 / 4);
    expect(a.recall).toBeCloseTo(3 / 4);
    expect(a.f1).toBeCloseTo(0.75);
    expect(a.support).toBe(4);
    const b = classScores(m, LABELS, "b");
    expect(b.precision).toBeCloseTo(2 / 3);
    expect(b.recall).toBeCloseTo(2 / 4);
    expect(b.f1).toBeCloseTo((2 * (2 / 3) * 0.5) / (2 / 3 + 0.5));
    const c = classScores(m, LABELS, "c");
    expect(c).toEqual({ precision: 0, recall: 0, f1: 0, support: 0, predicted: 1 });
  });

  it("averages F1 over the classes asked for", () => {
    const s = score(LABELS, gold, predicted);
    const fb = (2 * (2 / 3) * 0.5) / (2 / 3 + 0.5);
    expect(s.n).toBe(8);
    expect(s.accuracy).toBeCloseTo(5 / 8);
    expect(s.macroF1).toBeCloseTo((0.75 + fb + 0) / 3);
    expect(macroF1(s.perClass, ["a", "b"])).toBeCloseTo((0.75 + fb) / 2);
    expect(score(LABELS, gold, predicted, ["a"]).macroF1).toBeCloseTo(0.75);
    expect(score(LABELS, [], []).accuracy).toBe(0);
  });

  it("prints the matrix with row totals", () => {
    const lines = formatConfusion(confusionMatrix(LABELS, gold, predicted), LABELS);
    expect(lines).toHaveLength(4);
    expect(lines[1]!.split(/\s+/)).toEqual(["a", "3", "1", "0", "4"]);
    expect(lines[2]!.split(/\s+/)).toEqual(["b", "1", "2", "1", "4"]);
  });
});

describe("feedback data", () => {
  it("reads issues from at least six repositories, split by whole repository, with every kind in both splits", () => {
    const issues = readIssues();
    const repos = new Set(issues.map((i) => i.repo));
    expect(repos.size).toBeGreaterThanOrEqual(6);
    // A repository lies wholly in dev or wholly in test, so test measures unseen projects.
    for (const repo of repos) expect(new Set(issues.filter((i) => i.repo === repo).map((i) => i.split)).size).toBe(1);
    for (const split of SPLITS) {
      for (const label of ISSUE_LABELS) expect(issues.some((i) => i.split === split && i.label === label)).toBe(true);
      // Questions come from more than one project on each side.
      expect(new Set(issues.filter((i) => i.split === split && i.label === "question").map((i) => i.repo)).size).toBeGreaterThanOrEqual(2);
    }
    const devShare = issues.filter((i) => i.split === "dev").length / issues.length;
    expect(devShare).toBeGreaterThan(0.3);
    expect(devShare).toBeLessThan(0.5);
    expect(() => issueSplitOf("nobody/unknown")).toThrow();
    expect(new Set(issues.map((i) => i.id)).size).toBe(issues.length);
    // Bodies are the published markdown, line breaks and code fences included.
    expect(issues.some((i) => i.body.includes("\r\n"))).toBe(true);
    expect(issues.some((i) => i.body.includes("```"))).toBe(true);
  });

  it("reads reviews with every kind in both splits and stars 1–5", () => {
    const reviews = readReviews();
    for (const split of SPLITS) {
      for (const label of REVIEW_LABELS) expect(reviews.some((r) => r.split === split && r.label === label)).toBe(true);
    }
    expect(reviews.every((r) => r.stars === undefined || (r.stars >= 1 && r.stars <= 5))).toBe(true);
    expect(reviews.filter((r) => r.stars !== undefined).length).toBeGreaterThan(reviews.length * 0.9);
  });

  it("splits reviews by the id's hash, the same way every time", () => {
    expect(splitOf("x/y#1")).toBe(splitOf("x/y#1"));
    const ids = Array.from({ length: 2000 }, (_, i) => `repo#${i}`);
    const dev = ids.filter((id) => splitOf(id) === "dev").length / ids.length;
    expect(dev).toBeGreaterThan(0.35);
    expect(dev).toBeLessThan(0.45);
  });

  it("parses quoted CSV fields and maps review columns", () => {
    expect(parseCsv('a,b\n"x, ""y""\nz",2\r\n')).toEqual([
      ["a", "b"],
      ['x, "y"\nz', "2"],
    ]);
    const row = { data: "Crashes on start", score: "1", problem_report: "1", feature_request: "0", irrelevant: "0" };
    expect(convertReviewRow(row, "app:1", "App")).toMatchObject({ label: "bug", stars: 1, app: "App" });
    expect(convertReviewRow({ ...row, feature_request: "1" }, "app:2", "App")).toEqual({ dropped: "several labels" });
  });
});

describe("feedback baselines", () => {
  it("reads obvious keywords", () => {
    expect(issueKeywordKind("App crashes on save", "Stack trace below")).toBe("bug");
    expect(issueKeywordKind("Add support for dark mode", "It would be nice to have")).toBe("feature");
    expect(issueKeywordKind("How do I configure the proxy?", "")).toBe("question");
    expect(reviewKeywordKind("Please add a widget, it would be great")).toBe("feature");
    expect(reviewKeywordKind("It keeps crashing since the update")).toBe("bug");
    expect(reviewKeywordKind("Love it")).toBe("other");
    expect([5, 4, 3, 2, 1].map(starsPolarity)).toEqual(["positive", "positive", "neutral", "negative", "negative"]);
  });
});
