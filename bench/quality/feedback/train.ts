/**
 * Trains the feedback-kind model (src/enrichment/feedback-kind/model.json) on the DEV splits of the
 * labelled feedback sets (bench/quality/feedback/data: GitHub issues labelled bug / feature / question
 * by their maintainers, app reviews labelled bug / feature / other). The test splits are never read.
 *
 *   npx tsx bench/quality/feedback/train.ts [--epochs 300] [--l2 1e-4] [--min-df 3] [--out path]
 *
 * Multinomial logistic regression, full-batch gradient descent with Adam, L2-regularised, classes
 * weighted by inverse frequency. A word feature is kept when it occurs in at least `min-df`
 * training originals and in at least two groups (repositories, apps), so a project's own names
 * ("matomo", a crate, an app) never become evidence of a kind. Prints the training accuracy and a
 * held-out estimate on 20% of dev (never the test split); weights are rounded to 4 decimals and
 * features whose largest weight is below 0.002 dropped.
 */
import { writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { type Features, kindFeatures } from "../../../src/enrichment/feedback-kind/features.js";
import { classProbabilities, type KindModel, SOURCE_CLASSES, type SourceClass } from "../../../src/enrichment/feedback-kind/model.js";
import { readIssues, readReviews } from "./data/convert.js";

const { values: args } = parseArgs({
  options: {
    epochs: { type: "string", default: "300" },
    l2: { type: "string", default: "0.0001" },
    "min-df": { type: "string", default: "3" },
    rate: { type: "string", default: "0.05" },
    out: { type: "string", default: new URL("../../../src/enrichment/feedback-kind/model.json", import.meta.url).pathname },
  },
});

interface Example {
  id: string;
  group: string;
  label: SourceClass;
  features: Features;
}

function examples(): Example[] {
  const issues = readIssues()
    .filter((i) => i.split === "dev")
    .map((i) => ({ id: i.id, group: i.repo, label: i.label as SourceClass, features: kindFeatures(i.title, i.body) }));
  const reviews = readReviews()
    .filter((r) => r.split === "dev")
    .map((r) => ({ id: r.id, group: r.app ?? r.id.split(":")[0]!, label: r.label as SourceClass, features: kindFeatures("", r.text) }));
  return [...issues, ...reviews];
}

/** Deterministic 80/20 cut of dev for the printed estimate (by a hash of the id). */
const inHoldout = (id: string) => {
  let h = 2166136261;
  for (let i = 0; i < id.length; i++) h = Math.imul(h ^ id.charCodeAt(i), 16777619);
  return (h >>> 0) % 5 === 0;
};

function vocabulary(train: Example[], minDf: number): string[] {
  const df = new Map<string, number>();
  const groups = new Map<string, Set<string>>();
  for (const ex of train) {
    for (const name of ex.features.keys()) {
      df.set(name, (df.get(name) ?? 0) + 1);
      const seen = groups.get(name) ?? new Set<string>();
      seen.add(ex.group);
      groups.set(name, seen);
    }
  }
  const structural = (name: string) => !/^(?:\w+\|)?[tb]:/.test(name);
  return [...df.keys()].filter((n) => structural(n) || ((df.get(n) ?? 0) >= minDf && (groups.get(n)?.size ?? 0) >= 2)).sort();
}

function train(data: Example[], vocab: string[], epochs: number, l2: number, rate: number): KindModel {
  const K = SOURCE_CLASSES.length;
  const index = new Map(vocab.map((n, i) => [n, i]));
  const rows = data.map((ex) => ({
    y: SOURCE_CLASSES.indexOf(ex.label),
    x: [...ex.features].flatMap(([n, v]) => (index.has(n) ? [[index.get(n)!, v] as const] : [])),
  }));
  const counts = Array.from({ length: K }, (_, k) => rows.filter((r) => r.y === k).length);
  const classWeight = counts.map((c) => (c === 0 ? 0 : rows.length / (K * c)));
  const W = new Float64Array(vocab.length * K);
  const b = new Float64Array(K);
  const m = new Float64Array(W.length);
  const v = new Float64Array(W.length);
  const mb = new Float64Array(K);
  const vb = new Float64Array(K);
  const [beta1, beta2, eps] = [0.9, 0.999, 1e-8];
  for (let epoch = 1; epoch <= epochs; epoch++) {
    const gW = new Float64Array(W.length);
    const gb = new Float64Array(K);
    let weightSum = 0;
    for (const row of rows) {
      const s = Array.from(b);
      for (const [j, val] of row.x) for (let k = 0; k < K; k++) s[k]! += W[j * K + k]! * val;
      const top = Math.max(...s);
      const e = s.map((z) => Math.exp(z - top));
      const sum = e.reduce((a, c) => a + c, 0);
      const cw = classWeight[row.y]!;
      weightSum += cw;
      for (let k = 0; k < K; k++) {
        const d = cw * (e[k]! / sum - (k === row.y ? 1 : 0));
        gb[k]! += d;
        for (const [j, val] of row.x) gW[j * K + k]! += d * val;
      }
    }
    const t = epoch;
    for (let i = 0; i < W.length; i++) {
      const g = gW[i]! / weightSum + l2 * W[i]!;
      m[i] = beta1 * m[i]! + (1 - beta1) * g;
      v[i] = beta2 * v[i]! + (1 - beta2) * g * g;
      W[i]! -= (rate * (m[i]! / (1 - beta1 ** t))) / (Math.sqrt(v[i]! / (1 - beta2 ** t)) + eps);
    }
    for (let k = 0; k < K; k++) {
      const g = gb[k]! / weightSum;
      mb[k] = beta1 * mb[k]! + (1 - beta1) * g;
      vb[k] = beta2 * vb[k]! + (1 - beta2) * g * g;
      b[k]! -= (rate * (mb[k]! / (1 - beta1 ** t))) / (Math.sqrt(vb[k]! / (1 - beta2 ** t)) + eps);
    }
  }
  const weights: Record<string, number[]> = {};
  vocab.forEach((name, j) => {
    const w = Array.from({ length: K }, (_, k) => Math.round(W[j * K + k]! * 1e4) / 1e4);
    if (Math.max(...w.map(Math.abs)) >= 0.002) weights[name] = w;
  });
  return { version: 1, classes: [...SOURCE_CLASSES], bias: Array.from(b, (x) => Math.round(x * 1e4) / 1e4), weights };
}

const predict = (model: KindModel, ex: Example) => {
  const p = classProbabilities(model, ex.features);
  return model.classes[p.indexOf(Math.max(...p))]!;
};

function accuracy(model: KindModel, data: Example[]) {
  const right = data.filter((ex) => predict(model, ex) === ex.label).length;
  return data.length === 0 ? Number.NaN : right / data.length;
}

/** Issue macro-F1 over bug / feature / question, and review F1 of bug and feature, on `data`. */
function domainFigures(model: KindModel, data: Example[]) {
  const issues = data.filter((e) => !e.features.has("shape:no_title"));
  const reviews = data.filter((e) => e.features.has("shape:no_title"));
  const f1 = (set: Example[], label: SourceClass) => {
    const predicted = set.map((e) => predict(model, e));
    const tp = set.filter((e, i) => e.label === label && predicted[i] === label).length;
    const p = tp / Math.max(1, predicted.filter((x) => x === label).length);
    const r = tp / Math.max(1, set.filter((e) => e.label === label).length);
    return p + r === 0 ? 0 : (2 * p * r) / (p + r);
  };
  const macro = (f1(issues, "bug") + f1(issues, "feature") + f1(issues, "question")) / 3;
  const each = (["bug", "feature", "question"] as const).map((l) => `${l} ${f1(issues, l).toFixed(3)}`).join(", ");
  return `issues macro-F1 ${macro.toFixed(3)} (${each}); reviews bug F1 ${f1(reviews, "bug").toFixed(3)}, request F1 ${f1(reviews, "feature").toFixed(3)}`;
}

const all = examples();
const epochs = Number(args.epochs);
const l2 = Number(args.l2);
const rate = Number(args.rate);
const minDf = Number(args["min-df"]);
const fit = all.filter((e) => !inHoldout(e.id));
const holdout = all.filter((e) => inHoldout(e.id));
const estimate = train(fit, vocabulary(fit, minDf), epochs, l2, rate);
process.stdout.write(`dev: ${all.length} originals (${fit.length} fit, ${holdout.length} held out of dev)\n`);
process.stdout.write(
  `estimate on the held-out fifth of dev: accuracy ${accuracy(estimate, holdout).toFixed(3)}; ${domainFigures(estimate, holdout)}\n`,
);
const model = train(all, vocabulary(all, minDf), epochs, l2, rate);
process.stdout.write(
  `final model on all of dev: training accuracy ${accuracy(model, all).toFixed(3)}, ${Object.keys(model.weights).length} features\n`,
);
writeFileSync(args.out as string, `${JSON.stringify(model)}\n`);
process.stdout.write(`wrote ${args.out}\n`);
