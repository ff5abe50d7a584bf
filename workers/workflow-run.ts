import { isFinalAttempt } from "../src/jobs/failures.js";
import { executeRun } from "../src/runs/execute.js";
import type { Processor } from "./runtime.js";

/**
 * `workflow.run.v1`: runs the next step of one approved run (collect when refreshing, analyse,
 * settle). A step waiting on its child job ends this job; the child's end queues the next one.
 */
export const workflowRunProcessor: Processor<"workflow.run.v1"> = async ({ runId }, { deps, job }) => {
  return { status: await executeRun(deps, runId, { final: isFinalAttempt(job) }) };
};
