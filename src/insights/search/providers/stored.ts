import { visibleWorkspaceIds } from "../../../access/workspaces/access.js";
import { type Db, Prisma } from "../../../platform/db.js";
import { linkOrEmpty } from "../../../platform/links.js";
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
 * `rankAllUpTo` of them (the GIN and the created_at index are combined before any row is
 * read). When that window holds fewer than `limit` matches, the query runs without it.
 * Whatever the path, at most MAX_RANKED_MATCHES rows are ranked.
 */
export const RANK_ALL_UP_TO = 10_000;
export const MAX_RANKED_MATCHES = 50_000;
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

/** The `created_at` above which about `fraction` of all rows lie, from the column's histogram. */
async function recentFloor(db: Db, fraction: number): Promise<Date | undefined> {
  const rows = await db.$queryRaw<{ bounds: Date[] | null }[]>`
    SELECT histogram_bounds::text::timestamptz[] AS bounds FROM pg_stats
    WHERE schemaname = current_schema() AND tablename = 'content_store' AND attname = 'created_at'`;
  const bounds = rows[0]?.bounds;
  if (!bounds || bounds.length < 2) return undefined;
  const index = Math.floor((1 - fraction) * (bounds.length - 1));
  return index <= 0 ? undefined : bounds[index];
}

export function storedProvider(primary: Db, options: { rankAllUpTo?: number } = {}): SearchProvider {
  const rankAllUpTo = options.rankAllUpTo ?? RANK_ALL_UP_TO;

  const run = async (db: Db, request: ProviderRequest, workspaces: string[], storedSince: Date | undefined) => {
    const platformFilter = request.platforms ? Prisma.sql`AND c.platform = ANY(${request.platforms}::text[])` : Prisma.empty;
    const dateFilter = request.dateFrom
      ? Prisma.sql`AND coalesce(c.published_at, c.created_at) >= ${request.dateFrom}::timestamptz`
      : Prisma.empty;
    const windowFilter = storedSince ? Prisma.sql`AND c.created_at >= ${storedSince}::timestamptz` : Prisma.empty;
    // The tsquery is written inline (not in a CTE) so the planner sees it and can combine
    // the GIN index with the created_at index for the recency window.
    const tsquery = Prisma.sql`websearch_to_tsquery('english', ${request.query}::text)`;
    return db.$queryRaw<Row[]>`
      WITH matches AS (
        SELECT c.id, c.search_vector
        FROM content_store c
        WHERE c.search_vector @@ ${tsquery}
          AND c.workspace_id = ANY(${workspaces}::uuid[])
          AND c.platform <> ALL(${[...PRIVATE_PLATFORMS]}::text[])
          ${platformFilter}
          ${dateFilter}
          ${windowFilter}
        LIMIT ${MAX_RANKED_MATCHES}
      ),
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
        const since = await recentFloor(db, rankAllUpTo / estimate);
        if (since) {
          rows = await run(db, request, workspaces, since);
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
