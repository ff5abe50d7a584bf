import { analyseRows, type RowAnalysis, type RowText } from "./analyse.js";

/** An analysis thread's task (analysis-pool.ts): the rows of one enrichment chunk. */
export default function analyseTask(rows: RowText[]): RowAnalysis[] {
  return analyseRows(rows);
}
