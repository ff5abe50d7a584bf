import { SOURCE_CLASSES, type SourceClass } from "../../../src/insights/enrichment/feedback-kind/model.js";
import { readHeldOut } from "./out-of-fold.js";

/**
 * Whether the feedback-kind model's confidence ranks well on projects it never saw, on the DEV split
 * only: for each issue repository group of dev (neovim/*, rust-lang/*, TokTok/*), a model trained on
 * the rest (as train.ts's leave-one-group-out estimate) reads the held-out issues; printed per class,
 * the share of its calls of that class that the maintainers labelled so, beside the same share among
 * the 25 and 50 issues it gives the class the highest probability. A focused answer quotes the sources
 * most clearly of the asked kind first (src/insights/analysis/focus.ts, kindFit) because of this.
 *
 *   npx tsx bench/quality/feedback/confidence.ts
 */
const { examples, reads } = readHeldOut();
const groups = [...new Set(examples.filter((e) => e.domain === "issue").map((e) => e.group))].sort((a, b) => a.localeCompare(b));
const share = (xs: { label: SourceClass }[], label: SourceClass) => xs.filter((x) => x.label === label).length / Math.max(1, xs.length);

console.log("held-out group   class     issues  called  labelled so: of its calls   top 25   top 50");
for (const group of groups) {
  const heldOut = examples.filter((e) => e.group === group).map((e) => ({ label: e.label, p: reads.get(e.id)!.probabilities }));
  for (const label of ["bug", "feature", "question"] as const) {
    const c = SOURCE_CLASSES.indexOf(label);
    if (!heldOut.some((x) => x.label === label)) continue;
    const called = heldOut.filter((x) => x.p.indexOf(Math.max(...x.p)) === c);
    const ranked = [...heldOut].sort((a, b) => b.p[c]! - a.p[c]!);
    console.log(
      `${group.padEnd(17)}${label.padEnd(10)}${String(heldOut.length).padStart(6)}${String(called.length).padStart(8)}` +
        `${share(called, label).toFixed(3).padStart(26)}${share(ranked.slice(0, 25), label).toFixed(3).padStart(9)}` +
        `${share(ranked.slice(0, 50), label).toFixed(3).padStart(9)}`,
    );
  }
}
