import { runAnalysisJob } from "../src/analysis/runner.js";
import { isFinalAttempt } from "../src/jobs/failures.js";
import type { Processor } from "./runtime.js";

/** `analysis.run.v1`: runs one analysis; its last attempt records the failure on the stream. */
export const analysisProcessor: Processor<"analysis.run.v1"> = async (payload, { deps, job }) =>
  runAnalysisJob(deps, payload.analysisId, { final: isFinalAttempt(job) });
