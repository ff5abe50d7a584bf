import { dispatchDueRoutines } from "../src/workflows/routines/dispatch.js";
import type { Processor } from "./runtime.js";

/** `routines.tick.v1`: one dispatch pass over the due routines (see src/workflows/routines/scheduler.ts). */
export const routinesTickProcessor: Processor<"routines.tick.v1"> = async (_payload, { deps }) => {
  if (!deps.config.ROUTINES_ENABLED) return { status: "routines switched off" };
  return dispatchDueRoutines(deps);
};
