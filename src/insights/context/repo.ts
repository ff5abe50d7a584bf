import type { Db, DbTx } from "../../platform/db.js";

/** SQL of the saved pages: the race-safe upsert, the keyword ranking and the result rows. */

export interface PageWrite {
  userId: string;
  projectId: string | null;
  path: string;
  title: string;
  content: string;
  tags: string[];
  embedding: number[] | null;
  embeddingModel: string | null;
}

export interface PageRow {
  id: string;
  path: string;
  title: string;
  tags: string[];
  project_id: string | null;
  version: number;
  updated_at: Date;
  embedded: boolean;
}

/**
 * Creates the page at (user, path) or replaces it in one statement: concurrent saves to
 * one path serialise on the unique index, one creates (version 1) and the others replace.
 */
export async function upsertPage(db: Db | DbTx, page: PageWrite): Promise<PageRow> {
  const rows = await db.$queryRaw<PageRow[]>`
    INSERT INTO pages (id, user_id, project_id, path, title, content, tags, embedding, embedding_model, updated_at)
    VALUES (gen_random_uuid(), ${page.userId}::uuid, ${page.projectId}::uuid, ${page.path}, ${page.title}, ${page.content},
            ${page.tags}::text[], ${page.embedding}::real[], ${page.embeddingModel}, now())
    ON CONFLICT (user_id, path) DO UPDATE SET
      project_id = EXCLUDED.project_id,
      title = EXCLUDED.title,
      content = EXCLUDED.content,
      tags = EXCLUDED.tags,
      embedding = EXCLUDED.embedding,
      embedding_model = EXCLUDED.embedding_model,
      version = pages.version + 1,
      updated_at = now()
    RETURNING id::text AS id, path, title, tags, project_id::text AS project_id, version, updated_at,
              embedding IS NOT NULL AS embedded`;
  const row = rows[0];
  if (!row) throw new Error("page upsert returned no row");
  return row;
}

/** Stores a page's embedding if the page is still at `version` (a newer save brings its own). */
export async function storeEmbedding(db: Db, pageId: string, version: number, embedding: number[], model: string): Promise<boolean> {
  const count = await db.$executeRaw`
    UPDATE pages SET embedding = ${embedding}::real[], embedding_model = ${model}
    WHERE id = ${pageId}::uuid AND version = ${version}`;
  return count > 0;
}

/** A keyword query as two `websearch_to_tsquery` inputs: every term required, and any term enough. */
export interface KeywordQuery {
  all: string;
  any: string;
}

/**
 * The caller's pages matching any term of the query, on the generated `search_vector`
 * (title weighted above content, GIN-indexed): pages holding every term first, then by
 * `ts_rank` normalised by document length. `websearch_to_tsquery` never fails on input.
 */
export async function keywordRanking(
  db: Db,
  userId: string,
  query: KeywordQuery,
  projectId: string | undefined,
  depth: number,
): Promise<string[]> {
  const rows = await db.$queryRaw<{ id: string }[]>`
    SELECT p.id::text AS id
    FROM pages p, websearch_to_tsquery('english', ${query.any}) AS q_any, websearch_to_tsquery('english', ${query.all}) AS q_all
    WHERE p.user_id = ${userId}::uuid
      AND (${projectId ?? null}::uuid IS NULL OR p.project_id = ${projectId ?? null}::uuid)
      AND p.search_vector @@ q_any
    ORDER BY p.search_vector @@ q_all DESC, ts_rank(p.search_vector, q_any, 1) DESC, p.updated_at DESC, p.id
    LIMIT ${depth}`;
  return rows.map((r) => r.id);
}

export interface ResultRow {
  id: string;
  path: string;
  title: string;
  tags: string[];
  project_id: string | null;
  updated_at: Date;
  headline: string | null;
  head: string;
}

/** Characters of a page's content that `ts_headline` reads for a snippet. */
export const HEADLINE_WINDOW = 10_000;

/** The listed pages of the caller, with a highlighted snippet where the query matches. */
export async function resultRows(db: Db, userId: string, ids: string[], websearchQuery: string): Promise<ResultRow[]> {
  if (ids.length === 0) return [];
  return db.$queryRaw<ResultRow[]>`
    SELECT p.id::text AS id, p.path, p.title, p.tags, p.project_id::text AS project_id, p.updated_at,
           CASE WHEN p.search_vector @@ tsq THEN
             ts_headline('english', left(p.content, ${HEADLINE_WINDOW}), tsq,
                         'MaxFragments=2, MaxWords=30, MinWords=12, FragmentDelimiter=" … ", StartSel=**, StopSel=**')
           END AS headline,
           left(p.content, 600) AS head
    FROM pages p, websearch_to_tsquery('english', ${websearchQuery}) AS tsq
    WHERE p.user_id = ${userId}::uuid AND p.id = ANY(${ids}::uuid[])`;
}
