import { createEmbedder } from "../src/embed/provider.js";
import { isFinalAttempt } from "../src/jobs/failures.js";
import { executeSweep, markSweepFailed } from "../src/sweeps/execute.js";
import type { Processor } from "./runtime.js";

/** `sweep.run.v1`: an evidence capture run; marked failed when its last attempt fails. */
export const sweepProcessor: Processor<"sweep.run.v1"> = async (payload, { deps, job }) => {
  const finalAttempt = isFinalAttempt(job);
  try {
    return await executeSweep(deps, createEmbedder(deps.config), payload.runId);
  } catch (err) {
    if (finalAttempt) {
      await markSweepFailed(deps, payload.runId, err as Error).catch((markErr: unknown) =>
        deps.logger.error({ runId: payload.runId, err: markErr }, "could not mark the evidence capture run failed"),
      );
    }
    throw err;
  }
};
