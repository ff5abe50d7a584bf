import { runScheduledPass } from "../src/governance/deletion/retention.js";
import type { Processor } from "./runtime.js";

/** `retention.tick.v1`: purge deleted workspaces that are due, then apply retention (src/governance/deletion/scheduler.ts). */
export const retentionTickProcessor: Processor<"retention.tick.v1"> = async (_payload, { deps }) => runScheduledPass(deps);
