import { analyseRows, type RowAnalysis, type RowText } from "./analyse.js";
import { readTrackerKinds, type TrackerKindReading, type TrackerKindTask } from "./feedback-kind/adapt.js";

/** An analysis thread's task (analysis-pool.ts): the rows of one enrichment chunk. */
export default function analyseTask(rows: RowText[]): RowAnalysis[] {
  return analyseRows(rows);
}

/** An analysis thread's other task (`name: "readKindsTask"`): a tracker's unlabelled sources read its way (kind-adaptation.ts). */
export function readKindsTask(task: TrackerKindTask): TrackerKindReading[] | null {
  return readTrackerKinds(task);
}
