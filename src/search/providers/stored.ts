import { type Db, Prisma } from "../../platform/db.js";
import { visibleWorkspaceIds } from "../../workspaces/access.js";
import { PRIVATE_PLATFORMS } from "../schemas.js";
import type { ProviderRequest, SearchHit, SearchProvider } from "./types.js";

/**
 * The built-in provider: stored public originals of the caller's workspaces, ranked by
 * PostgreSQL full-text search over `content_store.search_vector` (GIN index; title
 * weighted above content) with `websearch_to_tsquery` (quoted phrases, `or`, `-word`).
 * Only the top `limit` rows get a `ts_headline` snippet. The date floor applies to
 * `published_at`, or to `created_at` (when the row was stored) for rows without one.
 */
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

export function storedProvider(db: Db): SearchProvider {
  return {
    name: "stored",
    async search(request: ProviderRequest): Promise<SearchHit[]> {
      const workspaces = await visibleWorkspaceIds(db, request.userId);
      if (workspaces.length === 0) return [];
      const platformFilter = request.platforms ? Prisma.sql`AND c.platform = ANY(${request.platforms}::text[])` : Prisma.empty;
      const dateFilter = request.dateFrom
        ? Prisma.sql`AND coalesce(c.published_at, c.created_at) >= ${request.dateFrom}::timestamptz`
        : Prisma.empty;
      const rows = await db.$queryRaw<Row[]>`
        WITH q AS (SELECT websearch_to_tsquery('english', ${request.query}) AS q),
        ranked AS (
          SELECT c.id, ts_rank_cd(c.search_vector, q.q, 32) AS score
          FROM content_store c, q
          WHERE c.search_vector @@ q.q
            AND c.workspace_id = ANY(${workspaces}::uuid[])
            AND c.platform <> ALL(${[...PRIVATE_PLATFORMS]}::text[])
            ${platformFilter}
            ${dateFilter}
          ORDER BY score DESC, c.id
          LIMIT ${request.limit}
        )
        SELECT c.id, c.title, c.url, c.platform, c.published_at, r.score::float8 AS score,
               ts_headline('english', left(c.content, ${HEADLINE_CHARS}), q.q, ${HEADLINE_OPTIONS}) AS snippet
        FROM ranked r JOIN content_store c ON c.id = r.id, q
        ORDER BY r.score DESC, r.id`;
      return rows.map((r) => ({
        title: r.title,
        url: r.url,
        platform: r.platform,
        snippet: r.snippet,
        contentId: r.id,
        publishedAt: r.published_at,
      }));
    },
  };
}
