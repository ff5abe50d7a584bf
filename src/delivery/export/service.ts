import { entityForUser, visibleWorkspaceIds } from "../../access/workspaces/access.js";
import { decodeCursor, encodeCursor } from "../../platform/cursor.js";
import type { Db } from "../../platform/db.js";
import { Prisma } from "../../platform/db.js";
import { DEFAULT_EXPORT_LIMIT, type ExportTable, type ExportTableResponse } from "./schemas.js";

/**
 * Raw export of one allowed table. Rows are whole (every column but the derived
 * full-text vector), snake_case as stored, limited to what the caller may see, in the
 * order (created_at, id). Rows added later take a later created_at, so they land at the
 * end of that order and offset paging neither skips nor repeats the rows already there.
 * (created_at is the writing transaction's start time: a transaction still open while
 * pages are read can commit rows that sort before the current page.) Each page also
 * carries `next_cursor`, a keyset position after which no existing row is ever skipped
 * or repeated, wherever rows are added or removed; it is the exact way to page.
 */
export interface ExportTableInput {
  table: ExportTable;
  entityId?: string | undefined;
  limit?: number | undefined;
  offset?: number | undefined;
  cursor?: string | undefined;
}

/** The rows of `table` (aliased `t`) the caller may see, optionally of one entity. */
async function visibility(db: Db, userId: string, table: ExportTable, entityId: string | undefined): Promise<Prisma.Sql> {
  if (entityId) {
    const entity = await entityForUser(db, userId, entityId);
    switch (table) {
      case "entities":
        return Prisma.sql`t.id = ${entity.id}::uuid`;
      case "insight_evidence":
        return Prisma.sql`EXISTS (SELECT 1 FROM entity_insights i WHERE i.id = t.insight_id AND i.entity_id = ${entity.id}::uuid)`;
      case "pages":
        // Pages belong to their user; an entity's pages are the caller's pages in the entity's project.
        return entity.projectId ? Prisma.sql`t.user_id = ${userId}::uuid AND t.project_id = ${entity.projectId}::uuid` : Prisma.sql`FALSE`;
      default:
        return Prisma.sql`t.entity_id = ${entity.id}::uuid`;
    }
  }
  const workspaces = await visibleWorkspaceIds(db, userId);
  const inWorkspaces = Prisma.sql`ANY(${workspaces}::uuid[])`;
  const insightVisible = (alias: string) => {
    const a = Prisma.raw(alias);
    return Prisma.sql`(EXISTS (SELECT 1 FROM entities e WHERE e.id = ${a}.entity_id AND e.workspace_id = ${inWorkspaces})
      OR (${a}.entity_id IS NULL AND EXISTS (SELECT 1 FROM analyses an WHERE an.id = ${a}.analysis_id
        AND (an.workspace_id = ${inWorkspaces} OR (an.workspace_id IS NULL AND an.user_id = ${userId}::uuid)))))`;
  };
  switch (table) {
    case "entities":
    case "content_store":
    case "knowledge":
      return Prisma.sql`t.workspace_id = ${inWorkspaces}`;
    case "opinion_units":
      return Prisma.sql`EXISTS (SELECT 1 FROM entities e WHERE e.id = t.entity_id AND e.workspace_id = ${inWorkspaces})`;
    case "entity_insights":
      return insightVisible("t");
    case "insight_evidence":
      return Prisma.sql`EXISTS (SELECT 1 FROM entity_insights i WHERE i.id = t.insight_id AND ${insightVisible("i")})`;
    case "pages":
      return Prisma.sql`t.user_id = ${userId}::uuid`;
  }
}

/**
 * A page row as exported: the table's row without its full-text vector; an original also with what enrichment
 * wrote of it (content_enrichment, null until enriched), as the columns it was stored in.
 */
function exportedRow(table: ExportTable): { row: Prisma.Sql; join: Prisma.Sql } {
  if (table !== "content_store") return { row: Prisma.sql`to_jsonb(t) - 'search_vector'`, join: Prisma.empty };
  return {
    row: Prisma.sql`(to_jsonb(t) - 'search_vector') || jsonb_build_object('embedding', e.embedding, 'embedding_model', e.embedding_model,
      'enriched_at', e.enriched_at, 'feedback_kind', e.feedback_kind, 'feedback_kind_confidence', e.feedback_kind_confidence)`,
    join: Prisma.sql`LEFT JOIN content_enrichment e ON e.content_id = t.id`,
  };
}

export async function exportTable(db: Db, userId: string, input: ExportTableInput): Promise<ExportTableResponse> {
  const limit = input.limit ?? DEFAULT_EXPORT_LIMIT;
  const cursor = input.cursor ? decodeCursor(input.cursor) : undefined;
  const table = Prisma.raw(input.table);
  const visible = await visibility(db, userId, input.table, input.entityId);
  const afterCursor = cursor ? Prisma.sql`AND (t.created_at, t.id) > (${cursor.createdAt}::timestamptz, ${cursor.id}::uuid)` : Prisma.empty;
  const skip = input.offset ?? 0;
  const exported = exportedRow(input.table);

  const [counts, page] = await db.$transaction(
    async (tx) => {
      // One snapshot for the count and the page, so `total` and `rows` agree.
      const counted = await tx.$queryRaw<{ total: number; before: number }[]>`
        SELECT count(*)::int AS total,
          ${cursor ? Prisma.sql`count(*) FILTER (WHERE (t.created_at, t.id) <= (${cursor.createdAt}::timestamptz, ${cursor.id}::uuid))::int` : Prisma.sql`0`} AS before
        FROM ${table} t WHERE ${visible}`;
      const rows = await tx.$queryRaw<{ row: Record<string, unknown>; k_ts: Date; k_id: string }[]>`
        SELECT ${exported.row} AS row, t.created_at AS k_ts, t.id AS k_id
        FROM (
          SELECT t.id FROM ${table} t WHERE ${visible} ${afterCursor}
          ORDER BY t.created_at, t.id OFFSET ${skip} LIMIT ${limit + 1}
        ) p JOIN ${table} t ON t.id = p.id ${exported.join}
        ORDER BY t.created_at, t.id`;
      return [counted[0] ?? { total: 0, before: 0 }, rows] as const;
    },
    { isolationLevel: Prisma.TransactionIsolationLevel.RepeatableRead, maxWait: 10_000, timeout: 60_000 },
  );

  const hasMore = page.length > limit;
  const rows = hasMore ? page.slice(0, limit) : page;
  const offset = counts.before + skip;
  const last = rows.at(-1);
  return {
    table: input.table,
    rows: rows.map((r) => r.row),
    count: rows.length,
    total: counts.total,
    limit,
    offset,
    next_offset: hasMore ? offset + rows.length : null,
    next_cursor: hasMore && last ? encodeCursor({ createdAt: last.k_ts, id: last.k_id }) : null,
  };
}
