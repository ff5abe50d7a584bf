import Sentiment from "sentiment";
import vader from "vader-sentiment";
import { opinionUnits } from "../../src/insights/enrichment/opinions.js";
import type { Polarity } from "./data/convert.js";

/**
 * Sentence polarity from the engine and from two word-list baselines, and the scores
 * that compare each with the gold labels.
 *
 * Engine: the sentence's opinion units (`opinionUnits`) vote with their labels, any label
 * other than positive or negative counting as neutral; the label with most votes wins,
 * and a tie goes to the sign of the units' summed sentiment scores when that label is
 * among the tied ones, else to neutral. Most sentences are one unit, so this is the
 * unit's own label.
 * VADER (`vader-sentiment`): compound ≥ 0.05 positive, ≤ -0.05 negative, else neutral.
 * AFINN (`sentiment`): comparative score (sum of word scores / tokens) > 0 positive,
 * < 0 negative, else neutral.
 */
export const POLARITIES: readonly Polarity[] = ["positive", "negative", "neutral"];

const asPolarity = (label: string): Polarity => (label === "positive" || label === "negative" ? label : "neutral");

export function enginePolarity(text: string): Polarity {
  const units = opinionUnits(text);
  const votes: Record<Polarity, number> = { positive: 0, negative: 0, neutral: 0 };
  let sum = 0;
  for (const unit of units) {
    votes[asPolarity(unit.label as string)]++;
    sum += unit.sentiment;
  }
  const top = Math.max(...Object.values(votes));
  const leaders = POLARITIES.filter((p) => votes[p] === top);
  if (leaders.length === 1) return leaders[0]!;
  const bySum: Polarity = sum > 0 ? "positive" : sum < 0 ? "negative" : "neutral";
  return leaders.includes(bySum) ? bySum : "neutral";
}

export const VADER_THRESHOLD = 0.05;

export function vaderPolarity(text: string): Polarity {
  const { compound } = vader.SentimentIntensityAnalyzer.polarity_scores(text);
  return compound >= VADER_THRESHOLD ? "positive" : compound <= -VADER_THRESHOLD ? "negative" : "neutral";
}

const afinn = new Sentiment();

export function afinnPolarity(text: string): Polarity {
  const { comparative } = afinn.analyze(text);
  return comparative > 0 ? "positive" : comparative < 0 ? "negative" : "neutral";
}

export interface PolarityScores {
  n: number;
  accuracy: number;
  macroF1: number;
  f1: Record<Polarity, number>;
  /** confusion[gold][predicted] */
  confusion: Record<Polarity, Record<Polarity, number>>;
}

export function scorePolarity(gold: readonly Polarity[], predicted: readonly Polarity[]): PolarityScores {
  const confusion = Object.fromEntries(
    POLARITIES.map((g) => [g, Object.fromEntries(POLARITIES.map((p) => [p, 0]))]),
  ) as PolarityScores["confusion"];
  gold.forEach((g, i) => {
    confusion[g][predicted[i] ?? "neutral"]++;
  });
  const correct = POLARITIES.reduce((sum, p) => sum + confusion[p][p], 0);
  const f1 = Object.fromEntries(
    POLARITIES.map((p) => {
      const tp = confusion[p][p];
      const predictedP = POLARITIES.reduce((sum, g) => sum + confusion[g][p], 0);
      const goldP = POLARITIES.reduce((sum, q) => sum + confusion[p][q], 0);
      const precision = predictedP === 0 ? 0 : tp / predictedP;
      const recall = goldP === 0 ? 0 : tp / goldP;
      return [p, precision + recall === 0 ? 0 : (2 * precision * recall) / (precision + recall)];
    }),
  ) as Record<Polarity, number>;
  return {
    n: gold.length,
    accuracy: gold.length === 0 ? 0 : correct / gold.length,
    macroF1: POLARITIES.reduce((sum, p) => sum + f1[p], 0) / POLARITIES.length,
    f1,
    confusion,
  };
}
