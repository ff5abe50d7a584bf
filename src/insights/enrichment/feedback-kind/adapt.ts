import { randomUUID } from "node:crypto";
import { kindFeatures } from "./features.js";
import type { LabelKind } from "./labels.js";
import { classifySource, type KindModel, kindModel, type SourceClass } from "./model.js";
import { adam, softmaxInPlace } from "./optimise.js";

/**
 * The feedback-kind model adapted to one issue tracker by the issues its maintainers have labelled.
 * Trackers triage differently: one closes usage problems filed as bug reports with a `question` label,
 * another has no question label at all, a third labels every proposal `enhancement`. The shared model
 * reads a tracker it never saw at about 0.6–0.8 macro-F1; given the labelled issues of the same tracker
 * it learns that tracker's habits and reads its unlabelled issues (new, not yet triaged) their way.
 *
 * The adaptation is a fine-tuning of the shared model: the same multinomial logistic regression, started
 * from the shared weights and held near them by L2 (`l2`), trained on the tracker's labelled issues with
 * the kinds weighed alike. A word only this tracker uses gets a weight of its own; a word it uses as
 * everyone does keeps the shared weight. Measured on dev's repositories (a model that did not see the
 * repository, adapted on a hashed half of its issues, scored on the other half; `bench/quality/feedback`):
 * neovim 0.52 → 0.68, rust-lang 0.79 → 0.91, TokTok 0.82 → 0.89 macro-F1, with `l2` 0.03 chosen there.
 */
export interface LabelledText {
  title: string;
  content: string;
  kind: LabelKind;
}

export interface AdaptSettings {
  /** L2 strength pulling every weight towards the shared model's (0 for a feature it does not have). */
  l2: number;
  /** The same for the class biases. */
  biasL2: number;
  epochs: number;
  rate: number;
}

export const ADAPT_SETTINGS: AdaptSettings = { l2: 0.03, biasL2: 0.01, epochs: 100, rate: 0.05 };

/** A tracker is adapted to once it has this many labelled issues … */
export const MIN_LABELLED = 30;
/** … of at least two kinds with this many each (one kind alone teaches only that everything is it). */
export const MIN_PER_KIND = 5;

const CLASS_OF: Record<LabelKind, SourceClass> = { bug_report: "bug", feature_request: "feature", question: "question" };

/** Whether a tracker's labelled issues are enough to adapt to. */
export function canAdapt(labelled: readonly Pick<LabelledText, "kind">[]): boolean {
  if (labelled.length < MIN_LABELLED) return false;
  const counts = new Map<LabelKind, number>();
  for (const l of labelled) counts.set(l.kind, (counts.get(l.kind) ?? 0) + 1);
  return [...counts.values()].filter((n) => n >= MIN_PER_KIND).length >= 2;
}

/** What adaptation changes of the shared model: the class biases, and the weights of the features it learnt from. */
export interface KindOverlay {
  /** Names this adaptation, so a thread that reads page after page with it builds its model once. */
  id: string;
  bias: number[];
  weights: Record<string, number[]>;
}

/** The shared model with an adaptation's changes. */
export function withOverlay(base: KindModel, overlay: KindOverlay): KindModel {
  return { ...base, bias: [...overlay.bias], weights: { ...base.weights, ...overlay.weights } };
}

/** The shared model fine-tuned on a tracker's labelled issues. */
export function adaptModel(base: KindModel, labelled: readonly LabelledText[], settings: AdaptSettings = ADAPT_SETTINGS): KindModel {
  return withOverlay(base, adaptOverlay(base, labelled, settings));
}

/**
 * The fine-tuning's changes (full-batch gradient descent with Adam, as bench/quality/feedback/train.ts trains
 * the shared model): small beside the model, so it travels between threads. Deterministic for the same inputs
 * in the same order.
 */
export function adaptOverlay(base: KindModel, labelled: readonly LabelledText[], settings: AdaptSettings = ADAPT_SETTINGS): KindOverlay {
  const K = base.classes.length;
  const index = new Map<string, number>();
  const rows = labelled.map((l) => {
    const cols: number[] = [];
    for (const name of kindFeatures(l.title, l.content).keys()) {
      let j = index.get(name);
      if (j === undefined) {
        j = index.size;
        index.set(name, j);
      }
      cols.push(j);
    }
    return Int32Array.from(cols);
  });
  const names = [...index.keys()];
  const y = labelled.map((l) => base.classes.indexOf(CLASS_OF[l.kind]));
  // Each kind present weighs as much as any other, whatever its count.
  const counts = new Float64Array(K);
  for (const k of y) counts[k]! += 1;
  const present = counts.filter((n) => n > 0).length;
  const weight = y.map((k) => 1 / (counts[k]! * present));

  const prior = new Float64Array(names.length * K);
  names.forEach((name, j) => {
    const w = base.weights[name];
    if (w) for (let k = 0; k < K; k++) prior[j * K + k] = w[k]!;
  });
  const W = Float64Array.from(prior);
  const priorBias = Float64Array.from(base.bias);
  const b = Float64Array.from(base.bias);
  const step = adam(W.length + K, settings.rate);
  const grad = new Float64Array(W.length + K);
  const z = new Float64Array(K);
  for (let t = 1; t <= settings.epochs; t++) {
    grad.fill(0);
    for (let r = 0; r < rows.length; r++) {
      const cols = rows[r]!;
      z.set(b);
      for (const j of cols) for (let k = 0; k < K; k++) z[k]! += W[j * K + k]!;
      softmaxInPlace(z);
      for (let k = 0; k < K; k++) {
        const d = weight[r]! * (z[k]! - (k === y[r] ? 1 : 0));
        grad[W.length + k]! += d;
        for (const j of cols) grad[j * K + k]! += d;
      }
    }
    for (let i = 0; i < W.length; i++) grad[i]! += settings.l2 * (W[i]! - prior[i]!);
    for (let k = 0; k < K; k++) grad[W.length + k]! += settings.biasL2 * (b[k]! - priorBias[k]!);
    step(t, grad, (i, delta) => {
      if (i < W.length) W[i]! -= delta;
      else b[i - W.length]! -= delta;
    });
  }
  const weights: Record<string, number[]> = {};
  names.forEach((name, j) => {
    weights[name] = Array.from(W.subarray(j * K, j * K + K));
  });
  return { id: randomUUID(), bias: Array.from(b), weights };
}

/** An unlabelled issue read by the adapted model: its class and that class's probability. */
export interface TrackerKindReading {
  class: SourceClass;
  confidence: number;
}

/** A tracker's adaptation, or null when its labelled issues are too few to adapt to (`canAdapt`). CPU-bound: an analysis thread's task. */
export function adaptTrackerModel(labelled: readonly LabelledText[], base: KindModel = kindModel()): KindOverlay | null {
  return canAdapt(labelled) ? adaptOverlay(base, labelled) : null;
}

/** The model of the adaptation read last (its weights folded once: classifySource's tables are per model). */
let lastRead: { id: string; base: KindModel; model: KindModel } | undefined;

/** Issues read by the shared model with a tracker's adaptation, in order. CPU-bound: an analysis thread's task. */
export function readTrackerKinds(
  overlay: KindOverlay,
  rows: readonly { title: string; content: string }[],
  base: KindModel = kindModel(),
): TrackerKindReading[] {
  if (lastRead?.id !== overlay.id || lastRead.base !== base) lastRead = { id: overlay.id, base, model: withOverlay(base, overlay) };
  const model = lastRead.model;
  return rows.map((row) => {
    const guess = classifySource(row.title, row.content, model);
    return { class: guess.kind, confidence: guess.probabilities[guess.kind] };
  });
}
