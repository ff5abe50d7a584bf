import type { OpinionSpan } from "../opinions.js";
import { kindFromLabels } from "./labels.js";
import { classifySource, type SourceClass } from "./model.js";

/**
 * The kind of feedback an original is, stored on its row (`content_store.feedback_kind`): what the
 * feedback-kind model reads it as (a bug report, a feature request, a question), and otherwise praise,
 * a complaint or other by the polarity its opinion units carry. An issue tracker's labels that name a kind
 * (labels.ts) decide before the model, with confidence 1.
 */
export const FEEDBACK_KINDS = ["bug_report", "feature_request", "question", "praise", "complaint", "other"] as const;
export type FeedbackKind = (typeof FEEDBACK_KINDS)[number];

/** Net polarity (sum of the judged units' sentiment over their number) beyond which other feedback is praise or a complaint. */
const NET_POLARITY = 0.05;

export interface FeedbackKindReading {
  kind: FeedbackKind;
  /** The model's probability of the class the kind came from ("other" for praise, complaint and other); 1 for a label's kind. */
  confidence: number;
}

/** The stored kind of each model class but "other" (whose kind the units' polarity decides: `byPolarity`). */
export const KIND_OF_CLASS: Record<Exclude<SourceClass, "other">, FeedbackKind> = {
  bug: "bug_report",
  feature: "feature_request",
  question: "question",
};

export function feedbackKind(
  title: string,
  content: string,
  units: Pick<OpinionSpan, "label" | "sentiment" | "kind">[],
  labels: readonly string[] = [],
): FeedbackKindReading {
  const labelled = kindFromLabels(labels);
  if (labelled !== null) return { kind: labelled, confidence: 1 };
  const { kind: guessed, probabilities } = classifySource(title, content);
  return { kind: guessed === "other" ? byPolarity(units) : KIND_OF_CLASS[guessed], confidence: probabilities[guessed] };
}

/** Other feedback: praise or a complaint by the net polarity of its judged units, else other. */
export function byPolarity(units: Pick<OpinionSpan, "label" | "sentiment" | "kind">[]): FeedbackKind {
  const judged = units.filter((u) => u.kind !== "request" && u.label !== "neutral");
  if (judged.length === 0) return "other";
  const net = judged.reduce((sum, u) => sum + u.sentiment, 0) / judged.length;
  return net >= NET_POLARITY ? "praise" : net <= -NET_POLARITY ? "complaint" : "other";
}
