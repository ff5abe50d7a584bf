import type { AppDeps } from "../../platform/deps.js";
import { type IntervalSchedule, startIntervalScheduler } from "../../platform/interval-scheduler.js";
import { maintainRecentIndex, type RecentIndexOutcome } from "./recent-index.js";

/**
 * The recent search index's upkeep: one BullMQ job scheduler (`search-recent-index`, on the `enrichment`
 * queue) produces a `search.recent-index.v1` job every SEARCH_RECENT_INDEX_INTERVAL_MS (0 removes it);
 * the pass decides from PostgreSQL's statistics whether a build is due, so a duplicate tick finds nothing
 * to do (or the other pass's lock) and a lost one delays a build by an interval.
 */
export const SEARCH_INDEX_SCHEDULER_ID = "search-recent-index";
const searchIndexSchedule: IntervalSchedule = {
  id: SEARCH_INDEX_SCHEDULER_ID,
  job: "search.recent-index.v1",
  what: "recent search index",
};

export function startSearchIndexScheduler(deps: Pick<AppDeps, "queues" | "config" | "logger">): { close: () => Promise<void> } {
  return startIntervalScheduler(deps, searchIndexSchedule, deps.config.SEARCH_RECENT_INDEX_INTERVAL_MS);
}

/** One pass with the deployment's settings, logged when it builds or drops an index. */
export async function runRecentIndexPass(deps: Pick<AppDeps, "pool" | "redis" | "config" | "logger">): Promise<RecentIndexOutcome> {
  const outcome = await maintainRecentIndex(
    { pool: deps.pool, redis: deps.redis, redisPrefix: deps.config.REDIS_PREFIX },
    {
      minRows: deps.config.SEARCH_RECENT_INDEX_MIN_ROWS,
      targetRows: deps.config.SEARCH_RECENT_INDEX_ROWS,
    },
  );
  if (outcome.action === "built" || outcome.dropped.length > 0)
    deps.logger.info(
      { index: outcome.index?.name, horizon: outcome.index?.horizon, buildMs: outcome.buildMs, dropped: outcome.dropped },
      "recent search index maintained",
    );
  return outcome;
}
