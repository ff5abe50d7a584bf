import { createHash } from "node:crypto";
import { ADAPT_SETTINGS, adaptModel, canAdapt, type LabelledText } from "../../../src/insights/enrichment/feedback-kind/adapt.js";
import type { LabelKind } from "../../../src/insights/enrichment/feedback-kind/labels.js";
import { classifySource, type KindModel, kindModel, type SourceClass } from "../../../src/insights/enrichment/feedback-kind/model.js";
import type { GoldIssue, Split } from "./data/convert.js";
import { score } from "./metrics.js";
import { readHeldOut } from "./out-of-fold.js";

/**
 * The kind of a tracker's unlabelled issues once its maintainers have labelled some (feedback-kind/adapt.ts):
 * each repository's issues are cut in two by a hash of their id; the labels of one half are given to the
 * adaptation, as a tracker's triaged issues are, and the other half is scored, by the shared model and by
 * the model adapted to the repository, side by side. A repository whose labelled half is too small to adapt
 * to (`canAdapt`) is read by the shared model in every row.
 *
 * The shared model of the dev rows is, for each repository, the one trained without its repository group
 * (out-of-fold.ts), since the committed model saw every dev issue; the test rows use the committed model.
 *
 * A third row is the supervised baseline of one tracker: the same features and logistic regression trained
 * on the repository's labelled half alone, from zero weights (the adaptation's settings, so its L2 pulls
 * towards zero), nothing shared. It tells how far a tracker's own labels carry a model of this kind.
 */
const CLASSES: readonly SourceClass[] = ["bug", "feature", "question", "other"];
const GOLD: readonly SourceClass[] = ["bug", "feature", "question"];
const f3 = (x: number) => x.toFixed(3);
const KIND_OF: Record<string, LabelKind> = { bug: "bug_report", feature: "feature_request", question: "question" };

/** Whether an issue's label is given to the adaptation (about half of each repository's issues). */
export const labelledHalf = (id: string) => createHash("sha256").update(`labelled-half:${id}`).digest().readUInt32BE(0) < 2 ** 31;

export interface AdaptationRow {
  split: Split;
  system: string;
  n: number;
  macroF1: number;
  accuracy: number;
  f1: Record<"bug" | "feature" | "question", number>;
}

/** The shared model's classes and features with every weight and bias zero: what training from scratch starts from. */
function untrained(base: KindModel): KindModel {
  return { ...base, bias: base.bias.map(() => 0), weights: {} };
}

export function adaptationFigures(issues: Map<Split, GoldIssue[]>): { rows: AdaptationRow[]; adapted: string[]; perRepository: string[] } {
  const heldOut = issues.has("dev") ? readHeldOut() : undefined;
  const rows: AdaptationRow[] = [];
  const adapted: string[] = [];
  const perRepository: string[] = [];
  for (const [split, items] of issues) {
    const baseOf = (issue: GoldIssue): KindModel => (split === "test" ? kindModel() : (heldOut?.reads.get(issue.id)?.model ?? kindModel()));
    const gold: SourceClass[] = [];
    const shared: SourceClass[] = [];
    const tuned: SourceClass[] = [];
    const alone: SourceClass[] = [];
    for (const repo of [...new Set(items.map((i) => i.repo))].sort()) {
      const ofRepo = items.filter((i) => i.repo === repo);
      const labelled: LabelledText[] = ofRepo
        .filter((i) => labelledHalf(i.id))
        .map((i) => ({ title: i.title, content: i.body, kind: KIND_OF[i.label]! }));
      const scored = ofRepo.filter((i) => !labelledHalf(i.id));
      const base = baseOf(ofRepo[0]!);
      const model = canAdapt(labelled) ? adaptModel(base, labelled, ADAPT_SETTINGS) : base;
      const own = canAdapt(labelled) ? adaptModel(untrained(base), labelled, ADAPT_SETTINGS) : base;
      if (model !== base) adapted.push(`${repo} (${labelled.length} labelled)`);
      const from = gold.length;
      for (const issue of scored) {
        gold.push(issue.label as SourceClass);
        shared.push(classifySource(issue.title, issue.body, base).kind);
        tuned.push(classifySource(issue.title, issue.body, model).kind);
        alone.push(classifySource(issue.title, issue.body, own).kind);
      }
      // Macro-F1 over the kinds the repository's scored half has (Rust and qTox have no questions).
      const present = GOLD.filter((k) => gold.slice(from).includes(k));
      const of = (predicted: SourceClass[]) => f3(score(CLASSES, gold.slice(from), predicted.slice(from), present).macroF1);
      perRepository.push(`${repo} ${of(shared)} / ${of(tuned)} / ${of(alone)}`);
    }
    for (const [system, predicted] of [
      ["shared model (as above)", shared],
      ["adapted to each repository", tuned],
      ["its own labels only", alone],
    ] as const) {
      const s = score(CLASSES, gold, predicted, GOLD);
      rows.push({
        split,
        system,
        n: s.n,
        macroF1: s.macroF1,
        accuracy: s.accuracy,
        f1: { bug: s.perClass.bug.f1, feature: s.perClass.feature.f1, question: s.perClass.question.f1 },
      });
    }
  }
  return { rows, adapted, perRepository };
}
