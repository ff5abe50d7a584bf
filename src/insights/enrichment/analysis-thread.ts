import { analyseRows, type RowAnalysis, type RowText } from "./analyse.js";
import {
  adaptTrackerModel,
  type KindOverlay,
  type LabelledText,
  readTrackerKinds,
  type TrackerKindReading,
} from "./feedback-kind/adapt.js";

/** An analysis thread's task (analysis-pool.ts): the rows of one enrichment chunk. */
export default function analyseTask(rows: RowText[]): RowAnalysis[] {
  return analyseRows(rows);
}

/** Analysis threads' other tasks (`name`): a tracker's adaptation, and its issues read with it (kind-adaptation.ts). */
export function adaptKindsTask(labelled: LabelledText[]): KindOverlay | null {
  return adaptTrackerModel(labelled);
}

export function readKindsTask(task: { overlay: KindOverlay; rows: { title: string; content: string }[] }): TrackerKindReading[] {
  return readTrackerKinds(task.overlay, task.rows);
}
