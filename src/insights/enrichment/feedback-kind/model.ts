import { readFileSync } from "node:fs";
import { domainOf, type Features, sharedKindFeatures } from "./features.js";

/**
 * What an original is, as a product team files it: a bug report, a feature request, a question,
 * or other feedback. A multinomial logistic regression over the features of features.ts, trained
 * on public labelled GitHub issues and app reviews (bench/quality/feedback/train.ts, which also
 * records what was tried and its cross-project estimates; data and licences in
 * bench/quality/feedback/data/SOURCE.md). The cue families of features.ts carry general weights
 * set before training, so a project never seen still reads "How do I …?" as a question. Weights
 * are `model.json` beside this file: read once (about 0.7 MB), CPU only, a fraction of a
 * millisecond for a typical issue.
 */
export const SOURCE_CLASSES = ["bug", "feature", "question", "other"] as const;
export type SourceClass = (typeof SOURCE_CLASSES)[number];

export interface KindModel {
  version: number;
  classes: SourceClass[];
  bias: number[];
  /** Feature name → one weight per class, in `classes` order. */
  weights: Record<string, number[]>;
}

let loaded: KindModel | undefined;
/** Per model: for each kind of text, a feature's weights with its copy's under that kind added. */
const foldedOf = new WeakMap<KindModel, { titled: Map<string, Float64Array>; untitled: Map<string, Float64Array> }>();

function folded(model: KindModel, titled: boolean): Map<string, Float64Array> {
  let tables = foldedOf.get(model);
  if (!tables) {
    const fold = (domain: string) => {
      const table = new Map<string, Float64Array>();
      for (const [name, w] of Object.entries(model.weights)) {
        if (name.startsWith(domainOf(true)) || name.startsWith(domainOf(false))) continue;
        const copy = model.weights[domain + name];
        table.set(
          name,
          Float64Array.from(w, (x, c) => x + (copy?.[c] ?? 0)),
        );
      }
      for (const [name, w] of Object.entries(model.weights)) {
        if (!name.startsWith(domain)) continue;
        const shared = name.slice(domain.length);
        if (!(shared in model.weights)) table.set(shared, Float64Array.from(w));
      }
      return table;
    };
    tables = { titled: fold(domainOf(true)), untitled: fold(domainOf(false)) };
    foldedOf.set(model, tables);
  }
  return titled ? tables.titled : tables.untitled;
}

/** The committed model, read on first use. */
export function kindModel(): KindModel {
  loaded ??= JSON.parse(readFileSync(new URL("./model.json", import.meta.url), "utf8")) as KindModel;
  return loaded;
}

/** Class probabilities (softmax of the linear scores) for features under a model. */
export function classProbabilities(model: KindModel, features: Features): number[] {
  return linearProbabilities(model.bias, features, (name) => model.weights[name]);
}

/** Softmax of the bias plus each feature's weights (looked up by its name) times its value. */
function linearProbabilities(
  bias: readonly number[],
  features: Features,
  weightsOf: (name: string) => ArrayLike<number> | undefined,
): number[] {
  const scores = [...bias];
  for (const [name, value] of features) {
    const w = weightsOf(name);
    if (!w) continue;
    for (let c = 0; c < scores.length; c++) scores[c]! += w[c]! * value;
  }
  return softmax(scores);
}

export interface SourceKindGuess {
  kind: SourceClass;
  /** Probability of each class. */
  probabilities: Record<SourceClass, number>;
}

/** Softmax of linear scores. */
function softmax(scores: number[]): number[] {
  const top = Math.max(...scores);
  const exp = scores.map((s) => Math.exp(s - top));
  const sum = exp.reduce((a, b) => a + b, 0);
  return exp.map((e) => e / sum);
}

/**
 * The most likely class of an original (title may be empty). The same probabilities as
 * `classProbabilities(model, kindFeatures(title, content))`, with one lookup per feature: each
 * feature's weights and its copy's under the kind of text are added once per model.
 */
export function classifySource(title: string, content: string, model: KindModel = kindModel()): SourceKindGuess {
  const { features, titled } = sharedKindFeatures(title, content);
  const table = folded(model, titled);
  const p = linearProbabilities(model.bias, features, (name) => table.get(name));
  let best = 0;
  for (let c = 1; c < p.length; c++) if (p[c]! > p[best]!) best = c;
  const probabilities = Object.fromEntries(model.classes.map((k, i) => [k, p[i]!])) as Record<SourceClass, number>;
  return { kind: model.classes[best]!, probabilities };
}
