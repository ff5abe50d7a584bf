import type pg from "pg";
import type { Db } from "../../platform/db.js";
import { takeLease } from "../../platform/lease.js";
import type { Redis } from "../../platform/redis.js";

/**
 * The full-text index of the newest stored originals: a partial GIN on `content_store.search_vector`
 * whose predicate is `created_at >= <horizon>`, beside the GIN of every row.
 *
 * A broad query is ranked among its matches in a recent window (src/insights/search/providers/stored.ts),
 * but through the table's GIN PostgreSQL first decodes every match of the word, however old: for a word
 * in 3.7 % of 10 M rows, 367,000 entries, 106 ms of a 232 ms search, growing with the table. The
 * recent index holds the newest `targetRows` to `2 × targetRows` rows only, so the same search decodes
 * the window's part of them (37,000 entries, 10 ms). PostgreSQL uses it by itself for a query whose
 * window lies within it (`created_at >= since` with `since` at or after the horizon implies the index's
 * predicate): answers are the same whichever index serves them.
 *
 * The index is rebuilt (`CREATE INDEX CONCURRENTLY` with a newer horizon, then the older one dropped)
 * when more than `2 × targetRows` rows are newer than its horizon, and only once the table holds
 * `minRows` rows: below that the table's GIN is small enough. The horizon is read from the
 * `created_at` histogram (rows stored since the last ANALYZE are newer than any bound, so the index
 * holds at least `targetRows`). The name carries the horizon: `content_store_search_recent_<epoch ms>`.
 * A pass holds a lease in Redis (`<REDIS_PREFIX>:search:recent-index:pass`), so two workers never build
 * at once; a session advisory lock would break behind PgBouncer in transaction mode.
 */
export const RECENT_INDEX_PREFIX = "content_store_search_recent_";
/** The Redis key of a maintenance pass's lease, under the deployment's prefix. */
export const passLeaseKey = (redisPrefix: string) => `${redisPrefix}:search:recent-index:pass`;

export interface RecentIndexSettings {
  /** No recent index is built while the table holds fewer rows (its statistics' count). */
  minRows: number;
  /** A new index holds about this many of the newest rows; it is replaced once twice as many are newer. */
  targetRows: number;
}

export interface RecentIndex {
  name: string;
  horizon: Date;
}

/**
 * The table's `created_at` histogram (null before its first ANALYZE) and its planner's row count: what the
 * recent window of a search and the horizon of a recent index are read from.
 */
export const CREATED_AT_STATS = `
  SELECT (SELECT s.histogram_bounds::text::timestamptz[] FROM pg_stats s
          WHERE s.schemaname = current_schema() AND s.tablename = 'content_store' AND s.attname = 'created_at') AS bounds,
         greatest(c.reltuples, 0)::float8 AS total
  FROM pg_class c WHERE c.oid = 'content_store'::regclass`;
export interface CreatedAtStatsRow {
  bounds: Date[] | null;
  total: number;
}

/** About how many of the table's `total` rows were stored after `at`, from the `created_at` histogram. */
export function rowsNewerThan(stats: { total: number; bounds: Date[] }, at: Date): number {
  const buckets = stats.bounds.length - 1;
  if (buckets < 1) return stats.total;
  return (stats.bounds.filter((b) => b.getTime() > at.getTime()).length / buckets) * stats.total;
}

export type RecentIndexPlan = { build: Date } | { keep: string };

/**
 * What a pass does, from the table's row count and `created_at` histogram: build an index with a new
 * horizon, or keep what is there (`keep` says why).
 */
export function planRecentIndex(
  stats: { total: number; bounds: Date[] },
  current: RecentIndex | undefined,
  settings: RecentIndexSettings,
): RecentIndexPlan {
  const { total, bounds } = stats;
  if (total < settings.minRows) return { keep: "the table is smaller than the bound" };
  if (bounds.length < 2) return { keep: "the table has no created_at statistics yet" };
  const buckets = bounds.length - 1;
  if (current && rowsNewerThan(stats, current.horizon) <= 2 * settings.targetRows) return { keep: "the index is within bounds" };
  const index = Math.floor((1 - Math.min(1, settings.targetRows / total)) * buckets);
  // The horizon in whole milliseconds, rounded down: it is the index's name and predicate.
  const horizon = new Date(Math.floor(bounds[index]!.getTime()));
  if (current && horizon.getTime() <= current.horizon.getTime()) return { keep: "no newer horizon in the statistics" };
  return { build: horizon };
}

const horizonOf = (name: string): Date | undefined => {
  const ms = Number(name.slice(RECENT_INDEX_PREFIX.length));
  return name.startsWith(RECENT_INDEX_PREFIX) && Number.isSafeInteger(ms) && ms > 0 ? new Date(ms) : undefined;
};

interface IndexRow {
  name: string;
  valid: boolean;
}

const LIST_INDEXES = `
  SELECT i.relname AS name, x.indisvalid AND x.indisready AS valid
  FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid
  WHERE x.indrelid = 'content_store'::regclass AND starts_with(i.relname, '${RECENT_INDEX_PREFIX}')`;

/** The newest valid recent index of these rows, if any. */
function newestValid(rows: IndexRow[]): RecentIndex | undefined {
  let newest: RecentIndex | undefined;
  for (const row of rows) {
    const horizon = horizonOf(row.name);
    if (!row.valid || !horizon) continue;
    if (!newest || horizon > newest.horizon) newest = { name: row.name, horizon };
  }
  return newest;
}

/** The recent index searches may use (the newest valid one), read from the catalog. */
export async function readRecentIndex(db: Db): Promise<RecentIndex | undefined> {
  return newestValid(await db.$queryRawUnsafe<IndexRow[]>(LIST_INDEXES));
}

const cached = new WeakMap<Db, { at: number; value: Promise<RecentIndex | undefined> }>();

/**
 * `readRecentIndex`, remembered for `maxAgeMs` per client (the provider weighs its window's two scans
 * with it). A stale answer costs at most the slower of the two for a while; answers do not change.
 */
export function recentIndexOf(db: Db, maxAgeMs = 30_000): Promise<RecentIndex | undefined> {
  const hit = cached.get(db);
  if (hit && Date.now() - hit.at < maxAgeMs) return hit.value;
  const value = readRecentIndex(db).catch(() => undefined);
  cached.set(db, { at: Date.now(), value });
  return value;
}

/** The predicate of a recent index with this horizon. */
export function recentPredicate(horizon: Date): string {
  return `created_at >= '${horizon.toISOString()}'::timestamptz`;
}

export interface RecentIndexOutcome {
  /** `built`: a new index; `kept`: nothing to build (`reason`); `busy`: another pass holds the lock. */
  action: "built" | "kept" | "busy";
  reason?: string;
  index?: RecentIndex;
  /** Older or invalid recent indexes dropped by this pass. */
  dropped: string[];
  buildMs?: number;
}

/**
 * One maintenance pass, under its lease, on a connection of its own (`CREATE INDEX CONCURRENTLY` cannot run
 * in a transaction): drops what a failed build left (invalid indexes), builds a newer index when due, then
 * drops the older ones. Each statement stands alone, so the pass also runs behind PgBouncer.
 */
export async function maintainRecentIndex(
  handles: { pool: pg.Pool; redis: Redis; redisPrefix: string },
  settings: RecentIndexSettings,
): Promise<RecentIndexOutcome> {
  const lease = await takeLease(handles.redis, passLeaseKey(handles.redisPrefix));
  if (!lease) return { action: "busy", dropped: [] };
  const client = await handles.pool.connect();
  let healthy = true;
  try {
    const dropped: string[] = [];
    const drop = async (name: string) => {
      await client.query(`DROP INDEX CONCURRENTLY IF EXISTS "${name}"`);
      dropped.push(name);
    };
    const list = async () => (await client.query<IndexRow>(LIST_INDEXES)).rows;
    for (const row of await list()) if (!row.valid) await drop(row.name);

    const current = newestValid(await list());
    const stats = await client.query<CreatedAtStatsRow>(CREATED_AT_STATS);
    const plan = planRecentIndex({ total: stats.rows[0]?.total ?? 0, bounds: stats.rows[0]?.bounds ?? [] }, current, settings);
    if ("keep" in plan) return { action: "kept", reason: plan.keep, index: current, dropped };

    const name = `${RECENT_INDEX_PREFIX}${plan.build.getTime()}`;
    const started = Date.now();
    try {
      await client.query(
        `CREATE INDEX CONCURRENTLY "${name}" ON content_store USING GIN (search_vector) WHERE ${recentPredicate(plan.build)}`,
      );
    } catch (err) {
      // A failed concurrent build leaves an invalid index behind; the next pass drops it too.
      await drop(name).catch(() => {});
      throw err;
    }
    const buildMs = Date.now() - started;
    for (const row of await list()) if (row.name !== name) await drop(row.name);
    return { action: "built", index: newestValid(await list()), dropped, buildMs };
  } catch (err) {
    // A statement that failed midway (a cancelled build, say) may leave the connection unusable.
    healthy = false;
    throw err;
  } finally {
    client.release(!healthy);
    await lease.release().catch(() => {});
  }
}
