import { runRecentIndexPass } from "../src/insights/search/scheduler.js";
import type { Processor } from "./runtime.js";

/** `search.recent-index.v1`: build the recent full-text index when due (src/insights/search/recent-index.ts). */
export const searchIndexProcessor: Processor<"search.recent-index.v1"> = async (_payload, { deps }) => runRecentIndexPass(deps);
