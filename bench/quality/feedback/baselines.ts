import vader from "vader-sentiment";
import type { IssueLabel, ReviewLabel } from "./data/convert.js";

/**
 * Keyword baselines for the feedback benchmark, the floor the engine's own readings are
 * printed against. Pure functions; nothing is tuned to the data.
 *
 * Issue kind: each kind has a list of obvious patterns, matched case-insensitively over the
 * title and over the body as published (markdown, templates and code included). A pattern
 * found in the title counts 2, in the body 1; the kind with the highest total wins, ties
 * going bug > feature > question, and an issue matching nothing is called a bug (the most
 * frequent kind on issue trackers).
 * Review kind: a request regex and a bug regex, each a list of patterns; the side with more
 * distinct patterns found wins, a tie between non-zero counts goes to bug, and a review
 * matching neither is "other".
 * Review polarity: VADER's compound score, ≥ 0.05 positive, ≤ -0.05 negative, else
 * neutral (the thresholds of bench/quality/polarity.ts), scored against the stars.
 */

export const ISSUE_PATTERNS: Record<IssueLabel, readonly RegExp[]> = {
  bug: [
    /\bbugs?\b/i,
    /\bcrash(es|ed|ing)?\b/i,
    /\berrors?\b/i,
    /\bexceptions?\b/i,
    /\bfail(s|ed|ing|ure)?\b/i,
    /\bbroken\b/i,
    /\b(doesn'?t|does not|don'?t|do not|isn'?t|is not|not) work(ing)?\b/i,
    /\bpanic(s|ked)?\b/i,
    /\b(stack ?trace|traceback|backtrace)\b/i,
    /\bregression\b/i,
    /\b(wrong|incorrect|unexpected)\b/i,
  ],
  feature: [
    /\bfeature\b/i,
    /\benhancement\b/i,
    /\b(add|adding)\s+(a |an |the )?(support|option|ability|setting|way)\b/i,
    /\bsupport (for|of)\b/i,
    /\bwould be (nice|great|useful|good|helpful)\b/i,
    /\bplease add\b/i,
    /\bsuggest(ion|ed)?\b/i,
    /\brequest(ed|ing)?\b/i,
    /\ballow (users?|me|us|to)\b/i,
    /\bimprove(ment)?s?\b/i,
    /\bshould (be able|support|have|allow)\b/i,
  ],
  question: [
    /\?\s*$/m,
    /\bhow (do|can|to|should|would)\b/i,
    /\bis (it|there) (possible|a way)\b/i,
    /\bquestions?\b/i,
    /\bwhy (does|do|is|are)\b/i,
    /\bwhat (is|are|does)\b/i,
    /\b(any|some) (idea|hint|help|advice)s?\b/i,
    /\bwonder(ing)?\b/i,
    /\b(can|could) (someone|anyone|you) (help|explain|tell)\b/i,
    /\bconfused\b/i,
  ],
};

const ISSUE_ORDER: readonly IssueLabel[] = ["bug", "feature", "question"];

export function issueKeywordScores(title: string, body: string): Record<IssueLabel, number> {
  const scores = { bug: 0, feature: 0, question: 0 } as Record<IssueLabel, number>;
  for (const kind of ISSUE_ORDER) {
    for (const pattern of ISSUE_PATTERNS[kind]) {
      if (pattern.test(title)) scores[kind] += 2;
      if (pattern.test(body)) scores[kind] += 1;
    }
  }
  return scores;
}

export function issueKeywordKind(title: string, body: string): IssueLabel {
  const scores = issueKeywordScores(title, body);
  let best: IssueLabel = "bug";
  for (const kind of ISSUE_ORDER) if (scores[kind] > scores[best]) best = kind;
  return best;
}

export const REQUEST_PATTERNS: readonly RegExp[] = [
  /\bplease (add|make|bring|include|allow|let|consider|give)\b/i,
  /\bwould (be|love) (nice|great|awesome|good|helpful|useful|to see)\b/i,
  /\b(i |we )?wish\b/i,
  /\badd (an? |the )?(option|feature|setting|ability|way|support)\b/i,
  /\b(hope|hoping) (you|they|to see|for)\b/i,
  /\bshould (have|add|include|allow|be able)\b/i,
  /\b(need|needs) (an? |the )?(option|feature|way|setting)\b/i,
  /\b(can|could) you (please )?(add|make|include|bring)\b/i,
  /\bfeature request\b/i,
  /\b(i'?d|i would|we'?d|we would) (like|love) (to see|it if|an? )\b/i,
];

export const BUG_PATTERNS: readonly RegExp[] = [
  /\bcrash(es|ed|ing)?\b/i,
  /\b(doesn'?t|does not|don'?t|do not|isn'?t|is not|not|stopped|stop) (work|working|sync|syncing|connect|connecting|load|loading|open|opening)\b/i,
  /\bbugs?\b/i,
  /\berrors?\b/i,
  /\b(freez(e|es|ing)|froze|hang(s|ing)?|stuck)\b/i,
  /\b(won'?t|will not|can'?t|cannot|unable to) (open|load|sync|connect|pair|log ?in|sign ?in|update|start)\b/i,
  /\b(please )?fix\b/i,
  /\bglitch(es|y)?\b/i,
  /\b(problems?|issues?)\b/i,
  /\b(keeps?|kept) (disconnecting|crashing|closing|logging out)\b/i,
];

const countHits = (patterns: readonly RegExp[], text: string) => patterns.reduce((n, p) => n + (p.test(text) ? 1 : 0), 0);

export function reviewKeywordKind(text: string): ReviewLabel {
  const requests = countHits(REQUEST_PATTERNS, text);
  const bugs = countHits(BUG_PATTERNS, text);
  if (requests === 0 && bugs === 0) return "other";
  return requests > bugs ? "feature" : "bug";
}

export type Polarity = "positive" | "negative" | "neutral";
export const POLARITIES: readonly Polarity[] = ["positive", "negative", "neutral"];

export const VADER_THRESHOLD = 0.05;

export function vaderReviewPolarity(text: string): Polarity {
  const { compound } = vader.SentimentIntensityAnalyzer.polarity_scores(text);
  return compound >= VADER_THRESHOLD ? "positive" : compound <= -VADER_THRESHOLD ? "negative" : "neutral";
}

/** Gold polarity of a review from its stars: 4–5 positive, 1–2 negative, 3 neutral. */
export function starsPolarity(stars: number): Polarity {
  return stars >= 4 ? "positive" : stars <= 2 ? "negative" : "neutral";
}
