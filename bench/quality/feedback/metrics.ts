/**
 * Classification scores for the feedback benchmark: a confusion matrix, precision,
 * recall and F1 per class, macro-F1 over a chosen set of classes, and a printer.
 * Pure functions over label arrays; nothing here knows the data sets.
 *
 * Conventions: confusion[gold][predicted]; a class never predicted has precision 0, a
 * class with no gold items has recall 0, and F1 is 0 when precision + recall is 0.
 */

export type Confusion<L extends string> = Record<L, Record<L, number>>;

export interface ClassScores {
  precision: number;
  recall: number;
  f1: number;
  /** Gold items of the class. */
  support: number;
  /** Items predicted as the class. */
  predicted: number;
}

export interface Scores<L extends string> {
  n: number;
  accuracy: number;
  perClass: Record<L, ClassScores>;
  /** Mean F1 over the labels passed to `score` (or over `macroOver` when given). */
  macroF1: number;
  confusion: Confusion<L>;
}

export function emptyConfusion<L extends string>(labels: readonly L[]): Confusion<L> {
  return Object.fromEntries(labels.map((g) => [g, Object.fromEntries(labels.map((p) => [p, 0]))])) as Confusion<L>;
}

export function confusionMatrix<L extends string>(labels: readonly L[], gold: readonly L[], predicted: readonly L[]): Confusion<L> {
  if (gold.length !== predicted.length) throw new Error(`gold has ${gold.length} labels, predicted ${predicted.length}`);
  const known = new Set<string>(labels);
  const confusion = emptyConfusion(labels);
  gold.forEach((g, i) => {
    const p = predicted[i]!;
    if (!known.has(g) || !known.has(p)) throw new Error(`label outside ${labels.join("/")}: gold ${g}, predicted ${p}`);
    confusion[g][p]++;
  });
  return confusion;
}

export function classScores<L extends string>(confusion: Confusion<L>, labels: readonly L[], label: L): ClassScores {
  const tp = confusion[label][label];
  const support = labels.reduce((sum, p) => sum + confusion[label][p], 0);
  const predicted = labels.reduce((sum, g) => sum + confusion[g][label], 0);
  const precision = predicted === 0 ? 0 : tp / predicted;
  const recall = support === 0 ? 0 : tp / support;
  const f1 = precision + recall === 0 ? 0 : (2 * precision * recall) / (precision + recall);
  return { precision, recall, f1, support, predicted };
}

/** Mean F1 of `classes`. */
export function macroF1<L extends string>(perClass: Record<L, ClassScores>, classes: readonly L[]): number {
  if (classes.length === 0) return 0;
  return classes.reduce((sum, c) => sum + perClass[c].f1, 0) / classes.length;
}

export function score<L extends string>(
  labels: readonly L[],
  gold: readonly L[],
  predicted: readonly L[],
  macroOver: readonly L[] = labels,
): Scores<L> {
  const confusion = confusionMatrix(labels, gold, predicted);
  const perClass = Object.fromEntries(labels.map((l) => [l, classScores(confusion, labels, l)])) as Record<L, ClassScores>;
  const correct = labels.reduce((sum, l) => sum + confusion[l][l], 0);
  return {
    n: gold.length,
    accuracy: gold.length === 0 ? 0 : correct / gold.length,
    perClass,
    macroF1: macroF1(perClass, macroOver),
    confusion,
  };
}

/** The matrix as text lines: one row per gold label, one column per predicted label, then the row total. */
export function formatConfusion<L extends string>(confusion: Confusion<L>, labels: readonly L[], indent = ""): string[] {
  const width = Math.max(8, ...labels.map((l) => l.length + 2));
  const cell = (s: string | number) => String(s).padStart(width);
  const head = `${indent}${"gold \\ predicted".padEnd(18)}${labels.map(cell).join("")}${cell("total")}`;
  const rows = labels.map((g) => {
    const total = labels.reduce((sum, p) => sum + confusion[g][p], 0);
    return `${indent}${g.padEnd(18)}${labels.map((p) => cell(confusion[g][p])).join("")}${cell(total)}`;
  });
  return [head, ...rows];
}
