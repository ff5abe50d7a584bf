import { entityForUser, isMember, projectForUser, visibleWorkspaceIds } from "../../access/workspaces/access.js";
import { encodeCursor } from "../../platform/cursor.js";
import { type Db, Prisma } from "../../platform/db.js";
import { notFound } from "../../platform/errors.js";
import { type AnalysisList, type AnalysisListItem, DEFAULT_LIST_LIMIT, type ListAnalysesQuery } from "./list-schemas.js";
import { type AnalysisStatus, DEFAULT_SEARCH_MODE } from "./schemas.js";

/**
 * `GET /api/analyses`: past analyses, newest first (created_at, then id), a keyset page at a time.
 *
 * Who reads what is the rule of `GET /agent/v1/analysis/{id}` (`analysisForUser`): every member of an
 * analysis's workspace, whoever started it; an analysis of no workspace only its starter. An entity,
 * project or workspace the caller cannot see is a 404, as for an unknown id; without one, the list is
 * every analysis of the caller's workspaces and the caller's own analyses of no workspace. Membership is
 * read on every request, so a member removed from a workspace stops seeing its analyses at once, also
 * those they started. An analysis naming an entity or project is stored with that workspace
 * (`startAnalysis`), so the row's `workspace_id` is what the list filters on.
 */
/** The workspaces a request names (through its entity, project or workspace), or null when it names none. */
async function namedWorkspaces(db: Db, userId: string, query: ListAnalysesQuery): Promise<Set<string> | null> {
  const named: string[] = [];
  if (query.workspace_id) {
    if (!(await isMember(db, userId, query.workspace_id))) throw notFound("Workspace");
    named.push(query.workspace_id);
  }
  if (query.entity_id) named.push((await entityForUser(db, userId, query.entity_id)).workspaceId);
  if (query.project_id) named.push((await projectForUser(db, userId, query.project_id)).workspaceId);
  return named.length > 0 ? new Set(named) : null;
}

interface Row {
  id: string;
  user_id: string;
  workspace_id: string | null;
  entity_id: string | null;
  project_id: string | null;
  question: string;
  status: string;
  depth: string;
  search_mode: string | null;
  created_at: Date;
  finished_at: Date | null;
  has_result: boolean;
  sources_in_scope: number;
  sources_analysed: number;
  sources_cited: number;
  insights: number;
  evidence: number;
}

export async function listAnalyses(db: Db, userId: string, query: ListAnalysesQuery, baseUrl = ""): Promise<AnalysisList> {
  const limit = query.limit ?? DEFAULT_LIST_LIMIT;
  const named = await namedWorkspaces(db, userId, query);
  // An entity and a project (or workspace) of different workspaces name nothing in common.
  if (named && named.size > 1) return { analyses: [], limit, has_more: false, next_cursor: null };

  const filters: Prisma.Sql[] = [];
  if (query.entity_id) filters.push(Prisma.sql`a.entity_id = ${query.entity_id}::uuid`);
  if (query.project_id) filters.push(Prisma.sql`a.project_id = ${query.project_id}::uuid`);
  if (query.status) filters.push(Prisma.sql`a.status = ${query.status}`);
  if (query.cursor) filters.push(Prisma.sql`(a.created_at, a.id) < (${query.cursor.createdAt}::timestamptz, ${query.cursor.id}::uuid)`);
  const where = (owner: Prisma.Sql) => Prisma.join([owner, ...filters], " AND ");

  // One newest-first read per workspace (and one of the caller's own analyses of no workspace), each
  // along its (workspace_id | user_id, created_at, id) index and limited, merged: a page costs what its
  // limit asks, however many analyses the workspaces hold.
  const owners: Prisma.Sql[] = [...(named ?? (await visibleWorkspaceIds(db, userId)))].map(
    (workspaceId) => Prisma.sql`a.workspace_id = ${workspaceId}::uuid`,
  );
  if (!named)
    owners.push(Prisma.sql`a.workspace_id IS NULL AND a.user_id = ${userId}::uuid AND a.entity_id IS NULL AND a.project_id IS NULL`);
  if (owners.length === 0) return { analyses: [], limit, has_more: false, next_cursor: null };
  const reads = owners.map(
    (owner) =>
      Prisma.sql`(SELECT a.id, a.created_at FROM analyses a WHERE ${where(owner)} ORDER BY a.created_at DESC, a.id DESC LIMIT ${limit + 1})`,
  );

  // Counts come from the stored result, read for the page's rows only.
  const rows = await db.$queryRaw<Row[]>`
    WITH page AS (
      SELECT x.id FROM (${Prisma.join(reads, " UNION ALL ")}) x ORDER BY x.created_at DESC, x.id DESC LIMIT ${limit + 1}
    )
    SELECT a.id, a.user_id, a.workspace_id, a.entity_id, a.project_id, a.question, a.status, a.depth, a.search_mode,
      a.created_at, a.finished_at,
      coalesce(jsonb_typeof(r.data) = 'object', false) AS has_result,
      (SELECT coalesce(sum((c.v->>'in_scope')::int), 0) FROM jsonb_each(r.coverage) c(k, v))::int AS sources_in_scope,
      (SELECT coalesce(sum((c.v->>'retrieved')::int), 0) FROM jsonb_each(r.coverage) c(k, v))::int AS sources_analysed,
      (SELECT coalesce(sum((c.v->>'cited')::int), 0) FROM jsonb_each(r.coverage) c(k, v))::int AS sources_cited,
      (CASE WHEN jsonb_typeof(r.data->'insights') = 'array' THEN jsonb_array_length(r.data->'insights') ELSE 0 END)::int AS insights,
      (CASE WHEN jsonb_typeof(r.data->'evidence') = 'array' THEN jsonb_array_length(r.data->'evidence') ELSE 0 END)::int AS evidence
    FROM page p
    JOIN analyses a ON a.id = p.id
    CROSS JOIN LATERAL (
      SELECT a.result->'data' AS data,
        CASE WHEN jsonb_typeof(a.result->'data'->'coverage') = 'object' THEN a.result->'data'->'coverage' ELSE '{}'::jsonb END AS coverage
    ) r
    ORDER BY a.created_at DESC, a.id DESC`;

  const hasMore = rows.length > limit;
  const shown = hasMore ? rows.slice(0, limit) : rows;
  const last = shown.at(-1);
  return {
    analyses: shown.map((row) => toListItem(row, baseUrl.replace(/\/+$/, ""))),
    limit,
    has_more: hasMore,
    next_cursor: hasMore && last ? encodeCursor({ createdAt: last.created_at, id: last.id }) : null,
  };
}

function toListItem(row: Row, base: string): AnalysisListItem {
  const self = `${base}/agent/v1/analysis/${row.id}`;
  return {
    analysis_id: row.id,
    question: row.question,
    status: row.status as AnalysisStatus,
    depth: row.depth,
    // Rows written before the default was stored hold null: they ran with the default.
    search_mode: row.search_mode ?? DEFAULT_SEARCH_MODE,
    scope: { workspace_id: row.workspace_id, entity_id: row.entity_id, project_id: row.project_id },
    started_by: row.user_id,
    created_at: row.created_at.toISOString(),
    finished_at: row.finished_at ? row.finished_at.toISOString() : null,
    counts: row.has_result
      ? {
          sources_in_scope: row.sources_in_scope,
          sources_analysed: row.sources_analysed,
          sources_cited: row.sources_cited,
          insights: row.insights,
          evidence: row.evidence,
        }
      : null,
    links: {
      self,
      events: `${self}/events`,
      share: { method: "POST", href: `${base}/api/share-links`, body: { resource: "analysis", id: row.id } },
    },
  };
}
