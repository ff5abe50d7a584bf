import type { FeedbackKind } from "../../../src/insights/enrichment/feedback-kind/index.js";
import { classProbabilities, type KindModel, type SourceClass } from "../../../src/insights/enrichment/feedback-kind/model.js";
import { DEFAULT_SETTINGS, devExamples, type Example, train } from "./train.js";

/**
 * The dev issues read as the service reads a project it never saw: for each issue repository group of
 * dev (neovim/*, rust-lang/*, TokTok/*), a model trained on the rest of dev (as train.ts's
 * leave-one-group-out estimate) reads the group's issues. The committed model was trained on every dev
 * issue, so answers over dev with its kinds are answers over projects it has seen; with these, the dev
 * split measures what the test split measures, and answer-level choices can be made on dev.
 */
export interface HeldOutRead {
  examples: Example[];
  /** Per held-out issue: its class probabilities, in the fold model's class order, and that model. */
  reads: Map<string, { label: SourceClass; probabilities: number[]; model: KindModel }>;
}

export function readHeldOut(): HeldOutRead {
  const examples = devExamples();
  const groups = [...new Set(examples.filter((e) => e.domain === "issue").map((e) => e.group))].sort((a, b) => a.localeCompare(b));
  const reads: HeldOutRead["reads"] = new Map();
  for (const group of groups) {
    const model = train(
      examples.filter((e) => e.group !== group),
      DEFAULT_SETTINGS,
    );
    for (const e of examples.filter((x) => x.group === group)) {
      reads.set(e.id, { label: e.label, probabilities: classProbabilities(model, e.features), model });
    }
  }
  return { examples, reads };
}

const STORED: Record<SourceClass, FeedbackKind> = { bug: "bug_report", feature: "feature_request", question: "question", other: "other" };

/** The feedback kind and confidence each dev issue gets from the model that did not see its project ("other" stays other). */
export function outOfFoldKinds(read: HeldOutRead = readHeldOut()): Map<string, { kind: FeedbackKind; confidence: number }> {
  const out = new Map<string, { kind: FeedbackKind; confidence: number }>();
  for (const [id, { probabilities, model }] of read.reads) {
    let best = 0;
    for (let c = 1; c < probabilities.length; c++) if (probabilities[c]! > probabilities[best]!) best = c;
    out.set(id, { kind: STORED[model.classes[best]!], confidence: probabilities[best]! });
  }
  return out;
}
