import { visibleWorkspaceIds } from "../../../access/workspaces/access.js";
import { type Db, Prisma } from "../../../platform/db.js";
import { linkOrEmpty } from "../../../platform/links.js";
import { CREATED_AT_STATS, type CreatedAtStatsRow, recentIndexOf, rowsNewerThan } from "../recent-index.js";
import { PRIVATE_PLATFORMS } from "../schemas.js";
import type { ProviderRequest, SearchHit, SearchProvider } from "./types.js";

/**
 * The built-in provider: stored public originals of the caller's workspaces, ranked by
 * PostgreSQL full-text search over `content_store.search_vector` (GIN index; title
 * weighted above content) with `websearch_to_tsquery` (quoted phrases, `or`, `-word`).
 * Only the top `limit` rows get a `ts_headline` snippet. The date floor applies to
 * `published_at`, or to `created_at` (when the row was stored) for rows without one.
 *
 * Ranking reads every match's row, which is what makes a broad query slow. So a query the
 * planner expects to match more than `rankAllUpTo` rows is ranked over its most recently
 * stored matches: a `created_at` floor taken from the column's statistics keeps about
 * `rankAllUpTo` of them, in a window of at most MAX_WINDOW_ROWS stored rows (so a word in 0.5%
 * of 10 M rows is ranked among the matches of the newest 500,000 rows, about 2,300, not among
 * the newest 10,000 matches: finding those would mean combining 2 M index entries). When that
 * window holds fewer than `limit` matches, the query runs without it. Whatever the path, at most
 * MAX_RANKED_MATCHES rows are ranked.
 *
 * The window is found one of two ways (`windowScan`). Usually the GIN's matches are combined with
 * the created_at index before any row is read ("index"). But the GIN gives every match of a word,
 * however old, and for a word in a large share of the rows decoding them costs more than the rest
 * of the search (a word in 27% of 10 M rows: 2.7 M entries, 0.37 s); then the window's rows are
 * read through the created_at index alone and tested one by one ("recent": 37,000 rows, 0.04 s).
 * Which is cheaper follows from the planner's estimate and the table's size (WINDOW_ROW_COST).
 *
 * When the worker keeps a recent index (src/insights/search/recent-index.ts: a GIN of the newest rows
 * only) and the window lies within it, PostgreSQL serves the "index" way from it, decoding the matches
 * among those rows instead of all of them: the window's bound implies the index's predicate. The planner
 * proves that only from a bound it sees as a constant, which the statement's own (custom) plan gives; so
 * this statement stays unnamed, and nothing is added to it (a copy of the index's predicate written into
 * the query made the planner prefer the table's GIN at 10 M rows).
 */
export const RANK_ALL_UP_TO = 10_000;
export const MAX_RANKED_MATCHES = 50_000;
/** The recent window of a broad query spans at most this many stored rows. */
export const MAX_WINDOW_ROWS = 500_000;
/**
 * Costs in GIN entries decoded (measured at 10 M rows: about 0.17 µs an entry; docs/benchmarks.md):
 * a window row read through the created_at index and tested (1.5 µs), a window row's entry in the
 * created_at index's bitmap (0.085 µs), the page of a match in the window (5 µs).
 */
const WINDOW_ROW_COST = 9;
const WINDOW_ENTRY_COST = 0.5;
const MATCH_PAGE_COST = 30;

export type WindowScan = "index" | "recent";

/**
 * How to find the recent window (`windowRows` of the table's `total`) of a broad query expected to match
 * `estimate` rows: through the GIN and the created_at index ("index": every match's entry decoded, the
 * window's entries of the created_at index, then the pages of the matches in the window), or through the
 * created_at index alone ("recent": every row of the window read and tested). `indexedRows`: the rows of
 * the recent index that serves the window, if one does.
 */
export function windowScan(estimate: number, total: number, windowRows: number, indexedRows = total): WindowScan {
  const matchesInWindow = (windowRows * estimate) / Math.max(total, 1);
  // The GIN's entries decoded: every match, or those among the recent index's rows.
  const decoded = (estimate * Math.min(indexedRows, total)) / Math.max(total, 1);
  const viaGin = decoded + WINDOW_ENTRY_COST * windowRows + MATCH_PAGE_COST * matchesInWindow;
  const viaRecent = WINDOW_ROW_COST * windowRows;
  return viaRecent < viaGin ? "recent" : "index";
}
const HEADLINE_OPTIONS = 'StartSel="", StopSel="", MaxWords=35, MinWords=12, MaxFragments=2, FragmentDelimiter=" … "';
/** Characters of a row that `ts_headline` reads for the snippet. */
const HEADLINE_CHARS = 20_000;

interface Row {
  id: string;
  title: string;
  url: string;
  platform: string;
  published_at: Date | null;
  snippet: string;
  score: number;
}

/** The planner's estimate of how many rows match the query (no row is read). */
async function estimateMatches(db: Db, query: string): Promise<number> {
  const rows = await db.$queryRaw<{ "QUERY PLAN": { Plan?: { "Plan Rows"?: number } }[] }[]>`
    EXPLAIN (FORMAT JSON) SELECT 1 FROM content_store c WHERE c.search_vector @@ websearch_to_tsquery('english', ${query}::text)`;
  return Number(rows[0]?.["QUERY PLAN"]?.[0]?.Plan?.["Plan Rows"] ?? 0);
}

/**
 * The recent window of a query expected to match `estimate` rows: the `created_at` above which lie
 * about `rankAllUpTo` of its matches, or MAX_WINDOW_ROWS rows if fewer, from the column's histogram
 * and the planner's count of the table's rows.
 */
async function recentWindow(
  db: Db,
  estimate: number,
  rankAllUpTo: number,
): Promise<{ since: Date; rows: number; total: number; bounds: Date[] } | undefined> {
  const rows = await db.$queryRawUnsafe<CreatedAtStatsRow[]>(CREATED_AT_STATS);
  const bounds = rows[0]?.bounds;
  if (!bounds || bounds.length < 2) return undefined;
  const total = rows[0]!.total;
  const fraction = Math.min(rankAllUpTo / estimate, total > 0 ? MAX_WINDOW_ROWS / total : 1);
  const index = Math.floor((1 - fraction) * (bounds.length - 1));
  return index <= 0 ? undefined : { since: bounds[index]!, rows: fraction * total, total, bounds };
}

export function storedProvider(primary: Db, options: { rankAllUpTo?: number; scan?: WindowScan } = {}): SearchProvider {
  const rankAllUpTo = options.rankAllUpTo ?? RANK_ALL_UP_TO;

  const run = async (db: Db, request: ProviderRequest, workspaces: string[], window?: { since: Date; scan: WindowScan }) => {
    const platformFilter = request.platforms ? Prisma.sql`AND c.platform = ANY(${request.platforms}::text[])` : Prisma.empty;
    const dateFilter = request.dateFrom
      ? Prisma.sql`AND coalesce(c.published_at, c.created_at) >= ${request.dateFrom}::timestamptz`
      : Prisma.empty;
    const windowFilter = window ? Prisma.sql`AND c.created_at >= ${window.since}::timestamptz` : Prisma.empty;
    // The tsquery is written inline (not in a CTE) so the planner sees it and can combine
    // the GIN index with the created_at index for the recency window.
    const tsquery = Prisma.sql`websearch_to_tsquery('english', ${request.query}::text)`;
    const scope = Prisma.sql`c.workspace_id = ANY(${workspaces}::uuid[])
          AND c.platform <> ALL(${[...PRIVATE_PLATFORMS]}::text[])
          ${platformFilter}
          ${dateFilter}
          ${windowFilter}`;
    // "recent": the window's rows through the created_at index, each tested; OFFSET 0 keeps the match
    // outside the subquery, so the planner cannot answer it from the GIN.
    const matches =
      window?.scan === "recent"
        ? Prisma.sql`SELECT r.id, r.search_vector
          FROM (SELECT c.id, c.search_vector FROM content_store c WHERE ${scope} OFFSET 0) r
          WHERE r.search_vector @@ ${tsquery}
          LIMIT ${MAX_RANKED_MATCHES}`
        : Prisma.sql`SELECT c.id, c.search_vector
          FROM content_store c
          WHERE c.search_vector @@ ${tsquery} AND ${scope}
          LIMIT ${MAX_RANKED_MATCHES}`;
    return db.$queryRaw<Row[]>`
      WITH matches AS (${matches}),
      ranked AS (
        SELECT m.id, ts_rank_cd(m.search_vector, ${tsquery}, 32) AS score
        FROM matches m
        ORDER BY score DESC, m.id
        LIMIT ${request.limit}
      )
      SELECT c.id, c.title, c.url, c.platform, c.published_at, r.score::float8 AS score,
             ts_headline('english', left(c.content, ${HEADLINE_CHARS}), ${tsquery}, ${HEADLINE_OPTIONS}) AS snippet
      FROM ranked r JOIN content_store c ON c.id = r.id
      ORDER BY r.score DESC, r.id`;
  };

  return {
    name: "stored",
    async search(request: ProviderRequest): Promise<SearchHit[]> {
      // The caller's replica handle when the route gave one (every read below is stale-tolerant).
      const db = request.reads ?? primary;
      const workspaces = await visibleWorkspaceIds(db, request.userId);
      if (workspaces.length === 0) return [];
      let rows: Row[] | undefined;
      const estimate = await estimateMatches(db, request.query);
      if (estimate > rankAllUpTo) {
        const window = await recentWindow(db, estimate, rankAllUpTo);
        if (window) {
          const recent = await recentIndexOf(db);
          const within = recent && recent.horizon.getTime() <= window.since.getTime() ? recent : undefined;
          const indexed = within ? rowsNewerThan(window, within.horizon) : undefined;
          const scan = options.scan ?? windowScan(estimate, window.total, window.rows, indexed);
          rows = await run(db, request, workspaces, { since: window.since, scan });
          if (rows.length < request.limit) rows = undefined;
        }
      }
      rows ??= await run(db, request, workspaces, undefined);
      return rows.map((r) => ({
        title: r.title,
        // Rows stored before links were checked may hold other schemes; never answer them as links.
        url: linkOrEmpty(r.url),
        platform: r.platform,
        snippet: r.snippet,
        contentId: r.id,
        publishedAt: r.published_at,
      }));
    },
  };
}
