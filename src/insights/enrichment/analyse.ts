import { setImmediate as nextTurn } from "node:timers/promises";
import { type FeedbackKindReading, feedbackKind } from "./feedback-kind/index.js";
import { type OpinionSpan, opinionUnits } from "./opinions.js";

/**
 * The CPU-bound part of enrichment, apart from the database: a row's opinion units and its feedback
 * kind. Pure, so it runs the same inline or on an analysis thread (analysis-pool.ts).
 */
export interface RowText {
  title: string;
  content: string;
  /** The issue tracker's label names stored with the row (`metadata.labels`), if any: see feedback-kind/labels.ts. */
  labels?: readonly string[];
}

export interface RowAnalysis {
  spans: OpinionSpan[];
  kind: FeedbackKindReading;
}

function analyseRow(row: RowText): RowAnalysis {
  const spans = opinionUnits(row.content);
  return { spans, kind: feedbackKind(row.title, row.content, spans, row.labels) };
}

export function analyseRows(rows: readonly RowText[]): RowAnalysis[] {
  return rows.map(analyseRow);
}

/** Analyses rows somewhere: in this thread, or on a thread of a pool. */
export type Analyser = (rows: readonly RowText[]) => Promise<RowAnalysis[]>;

/** How long inline analysis keeps the event loop before letting it answer what is waiting. */
export const INLINE_SLICE_MS = 2;

/**
 * Analysis on the caller's own thread, giving the event loop a turn every `INLINE_SLICE_MS`: a chunk of 200
 * rows takes about 100 ms, and meanwhile another job's transaction may be waiting for its answer to send its
 * COMMIT while it holds its entity's roll-up lock (and every other writer of the entity with it).
 */
export const analyseInline: Analyser = async (rows) => {
  const out: RowAnalysis[] = [];
  let since = performance.now();
  for (const row of rows) {
    out.push(analyseRow(row));
    if (performance.now() - since >= INLINE_SLICE_MS) {
      await nextTurn();
      since = performance.now();
    }
  }
  return out;
};
