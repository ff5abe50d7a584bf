import { type FeedbackKindReading, feedbackKind } from "./feedback-kind/index.js";
import { type OpinionSpan, opinionUnits } from "./opinions.js";

/**
 * The CPU-bound part of enrichment, apart from the database: a row's opinion units and its feedback
 * kind. Pure, so it runs the same inline or on an analysis thread (analysis-pool.ts).
 */
export interface RowText {
  title: string;
  content: string;
}

export interface RowAnalysis {
  spans: OpinionSpan[];
  kind: FeedbackKindReading;
}

export function analyseRows(rows: readonly RowText[]): RowAnalysis[] {
  return rows.map((row) => {
    const spans = opinionUnits(row.content);
    return { spans, kind: feedbackKind(row.title, row.content, spans) };
  });
}

/** Analyses rows somewhere: in this thread, or on a thread of a pool. */
export type Analyser = (rows: readonly RowText[]) => Promise<RowAnalysis[]>;

export const analyseInline: Analyser = async (rows) => analyseRows(rows);
