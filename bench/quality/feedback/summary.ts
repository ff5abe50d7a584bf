/**
 * The feedback benchmark's sets and baseline figures (data and provenance:
 * bench/quality/feedback/data/SOURCE.md).
 *
 *   npx tsx bench/quality/feedback/summary.ts [--confusion]
 *
 * 1. Sizes per split and class of both sets.
 * 2. Issue kind (bug / feature / question) of the keyword baseline: macro-F1 over the
 *    three kinds, accuracy and per-kind F1, on dev and on test.
 * 3. Review kind: the request and bug regexes' F1 for feature requests and for bug
 *    reports (macro-F1 over bug / feature / other beside them), on dev and on test.
 * 4. Review polarity: VADER against the polarity the stars give (4–5 positive, 1–2
 *    negative, 3 neutral): accuracy and macro-F1, on dev and on test.
 * Each section is a table with one row per system and split, so the engine's readings
 * can be printed beside the baselines' rows.
 */
import { parseArgs } from "node:util";
import { issueKeywordKind, POLARITIES, type Polarity, reviewKeywordKind, starsPolarity, vaderReviewPolarity } from "./baselines.js";
import {
  describeSets,
  type GoldIssue,
  type GoldReview,
  ISSUE_LABELS,
  type IssueLabel,
  REVIEW_LABELS,
  type ReviewLabel,
  readIssues,
  readReviews,
  SPLITS,
  type Split,
} from "./data/convert.js";
import { formatConfusion, type Scores, score } from "./metrics.js";

export interface System<T, L extends string> {
  name: string;
  classify: (item: T) => L;
}

const f3 = (x: number) => (Number.isFinite(x) ? x.toFixed(3) : "n/a");
const log = (line = "") => process.stdout.write(`${line.trimEnd()}\n`);

function evaluate<T extends { split: Split }, L extends string>(
  items: T[],
  labels: readonly L[],
  gold: (item: T) => L,
  system: System<T, L>,
): Map<Split, Scores<L>> {
  const out = new Map<Split, Scores<L>>();
  for (const split of SPLITS) {
    const part = items.filter((i) => i.split === split);
    out.set(
      split,
      score(
        labels,
        part.map(gold),
        part.map((i) => system.classify(i)),
      ),
    );
  }
  return out;
}

function issueSection(issues: GoldIssue[], systems: System<GoldIssue, IssueLabel>[], showConfusion: boolean) {
  log("2. Issue kind: predicted bug / feature / question against the maintainers' label");
  log(
    `   ${"system".padEnd(24)}${"split".padEnd(7)}${"n".padStart(6)}  macro-F1  accuracy  ${ISSUE_LABELS.map((l) => `F1 ${l}`.padEnd(12)).join("")}`,
  );
  for (const system of systems) {
    const results = evaluate(issues, ISSUE_LABELS, (i) => i.label, system);
    for (const [split, s] of results) {
      log(
        `   ${system.name.padEnd(24)}${split.padEnd(7)}${String(s.n).padStart(6)}  ${f3(s.macroF1).padEnd(10)}${f3(s.accuracy).padEnd(10)}` +
          ISSUE_LABELS.map((l) => f3(s.perClass[l].f1).padEnd(12)).join(""),
      );
    }
    if (showConfusion) {
      log(`   ${system.name}, test:`);
      for (const line of formatConfusion(results.get("test")!.confusion, ISSUE_LABELS, "     ")) log(line);
    }
  }
  log();
}

function reviewKindSection(reviews: GoldReview[], systems: System<GoldReview, ReviewLabel>[], showConfusion: boolean) {
  log("3. Review kind: feature requests and bug reports found against the gold label (other = neither)");
  log(`   ${"system".padEnd(24)}${"split".padEnd(7)}${"n".padStart(6)}  request P / R / F1      bug P / R / F1          macro-F1 (3)`);
  for (const system of systems) {
    const results = evaluate(reviews, REVIEW_LABELS, (r) => r.label, system);
    for (const [split, s] of results) {
      const prf = (l: ReviewLabel) => `${f3(s.perClass[l].precision)} / ${f3(s.perClass[l].recall)} / ${f3(s.perClass[l].f1)}`.padEnd(24);
      log(`   ${system.name.padEnd(24)}${split.padEnd(7)}${String(s.n).padStart(6)}  ${prf("feature")}${prf("bug")}${f3(s.macroF1)}`);
    }
    if (showConfusion) {
      log(`   ${system.name}, test:`);
      for (const line of formatConfusion(results.get("test")!.confusion, REVIEW_LABELS, "     ")) log(line);
    }
  }
  log();
}

function polaritySection(reviews: GoldReview[], systems: System<GoldReview, Polarity>[], showConfusion: boolean) {
  const rated = reviews.filter((r) => r.stars !== undefined);
  const gold = (r: GoldReview) => starsPolarity(r.stars!);
  log("4. Review polarity against the stars (4–5 positive, 1–2 negative, 3 neutral)");
  for (const split of SPLITS) {
    const part = rated.filter((r) => r.split === split);
    log(`   ${split}: ${POLARITIES.map((p) => `${p} ${part.filter((r) => gold(r) === p).length}`).join(", ")}`);
  }
  log(
    `   ${"system".padEnd(24)}${"split".padEnd(7)}${"n".padStart(6)}  accuracy  macro-F1  ${POLARITIES.map((p) => `F1 ${p}`.padEnd(13)).join("")}`,
  );
  for (const system of systems) {
    const results = evaluate(rated, POLARITIES, gold, system);
    for (const [split, s] of results) {
      log(
        `   ${system.name.padEnd(24)}${split.padEnd(7)}${String(s.n).padStart(6)}  ${f3(s.accuracy).padEnd(10)}${f3(s.macroF1).padEnd(10)}` +
          POLARITIES.map((p) => f3(s.perClass[p].f1).padEnd(13)).join(""),
      );
    }
    if (showConfusion) {
      log(`   ${system.name}, test:`);
      for (const line of formatConfusion(results.get("test")!.confusion, POLARITIES, "     ")) log(line);
    }
  }
  log();
}

function main() {
  const { values } = parseArgs({ options: { confusion: { type: "boolean", default: false } } });
  const issues = readIssues();
  const reviews = readReviews();
  log("Feedback benchmark: labelled GitHub issues and app reviews (bench/quality/feedback/data/SOURCE.md)");
  log();
  log("1. Data");
  for (const line of describeSets(issues, reviews)) log(`   ${line}`);
  log();
  issueSection(issues, [{ name: "keyword baseline", classify: (i) => issueKeywordKind(i.title, i.body) }], values.confusion);
  reviewKindSection(reviews, [{ name: "keyword baseline", classify: (r) => reviewKeywordKind(r.text) }], values.confusion);
  polaritySection(reviews, [{ name: "VADER (compound ±0.05)", classify: (r) => vaderReviewPolarity(r.text) }], values.confusion);
}

main();
