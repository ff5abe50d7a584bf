import { UnrecoverableError } from "bullmq";
import { executeRun, RunNotVisibleYet } from "../src/runs/execute.js";
import { queueExecutor } from "../src/runs/executor.js";
import type { Processor } from "./runtime.js";

/** `workflow.run.v1`: collect (when refreshing), analyse and settle one approved run. */
export const workflowRunProcessor: Processor<"workflow.run.v1"> = async ({ runId }, { deps, job }) => {
  const final = job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
  try {
    return { status: await executeRun(deps, runId, queueExecutor(), { final }) };
  } catch (err) {
    if (err instanceof RunNotVisibleYet && final) throw new UnrecoverableError(err.message);
    throw err;
  }
};
