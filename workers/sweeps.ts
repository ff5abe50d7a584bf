import { createBulkEmbedder } from "../src/insights/embed/provider.js";
import { executeSweep, markSweepFailed } from "../src/intake/sweeps/execute.js";
import { processor } from "./runtime.js";

/** `sweep.run.v1`: an evidence capture run; marked failed when its last attempt fails. */
export const sweepProcessor = processor<"sweep.run.v1">(
  (payload, { deps }) => executeSweep(deps, createBulkEmbedder(deps.config), payload.runId),
  { onLastFailure: (payload, err, { deps }) => markSweepFailed(deps, payload.runId, err) },
);
