import { executeRun, markRunFailed } from "../src/workflows/runs/execute.js";
import { processor } from "./runtime.js";

/**
 * `workflow.run.v1`: runs the next step of one approved run (collect when refreshing, analyse,
 * settle). A step waiting on its child job ends this job; the child's end queues the next one. The
 * run is settled failed when a step fails for the last time.
 */
export const workflowRunProcessor = processor<"workflow.run.v1">(({ runId }, { deps }) => executeRun(deps, runId), {
  onLastFailure: ({ runId }, err, { deps }) => markRunFailed(deps, runId, err),
});
