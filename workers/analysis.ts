import { failAnalysis, runAnalysisJob } from "../src/insights/analysis/runner.js";
import { processor } from "./runtime.js";

/** `analysis.run.v1`: runs one analysis; when its last attempt fails, the failure ends its stream. */
export const analysisProcessor = processor<"analysis.run.v1">((payload, { deps }) => runAnalysisJob(deps, payload.analysisId), {
  onLastFailure: (payload, err, { deps }) => failAnalysis(deps, payload.analysisId, err),
});
