import { activeMembershipsOf, isUuid } from "../../access/workspaces/access.js";
import { type Db, Prisma } from "../../platform/db.js";
import { notFound } from "../../platform/errors.js";
import { readChanges } from "./changes.js";
import { renderContext } from "./context.js";
import { insightInScope, listInsights, readInsight } from "./records.js";
import type { ListQuery, WriteInsightInput } from "./schemas.js";
import { type KnowledgeScope, resolveScope, resolveWritableScope, type ScopeInput } from "./scope.js";
import { listContent, readContent, readSource } from "./sources.js";
import { writeInsight } from "./write.js";

/**
 * The operations behind the knowledge routes. A path id that names nothing the caller can
 * see answers 404 before anything else about the request is judged (its scope included),
 * as every id in this service does.
 */
type Probe = "insight" | "content" | "source";

const TABLE: Record<Probe, Prisma.Sql> = {
  insight: Prisma.raw("knowledge_insights"),
  content: Prisma.raw("content_store"),
  source: Prisma.raw("knowledge_source_revisions"),
};

async function visibleTo(db: Db, userId: string, probe: Probe, id: string): Promise<boolean> {
  if (!isUuid(id)) return false;
  const rows = await db.$queryRaw<unknown[]>`
    SELECT 1 FROM ${TABLE[probe]} x JOIN ${activeMembershipsOf(userId)} m ON m.workspace_id = x.workspace_id
    WHERE x.id = ${id}::uuid`;
  return rows.length > 0;
}

const RESOURCE: Record<Probe, string> = { insight: "Insight", content: "Content", source: "Source revision" };

async function scopeFor(db: Db, userId: string, input: ScopeInput, probe: Probe, id: string): Promise<KnowledgeScope> {
  if (!(await visibleTo(db, userId, probe, id))) throw notFound(RESOURCE[probe]);
  return resolveScope(db, userId, input);
}

export async function createInsight(db: Db, userId: string, input: WriteInsightInput) {
  return writeInsight(db, userId, input);
}

export async function reviseInsight(db: Db, userId: string, insightId: string, input: WriteInsightInput) {
  if (!(await visibleTo(db, userId, "insight", insightId))) throw notFound("Insight");
  const scope = await resolveWritableScope(db, userId, input);
  await insightInScope(db, scope, insightId);
  return writeInsight(db, userId, input, insightId);
}

export async function getInsight(
  db: Db,
  userId: string,
  insightId: string,
  query: ScopeInput & { revision?: number | undefined; include_evidence: boolean },
) {
  const scope = await scopeFor(db, userId, query, "insight", insightId);
  return readInsight(db, scope, insightId, { revision: query.revision, includeEvidence: query.include_evidence });
}

export async function listInsightsFor(db: Db, userId: string, query: ListQuery) {
  return listInsights(db, await resolveScope(db, userId, query), query);
}

export async function changesFor(db: Db, userId: string, query: ScopeInput & { after: string; limit: number }) {
  return readChanges(db, await resolveScope(db, userId, query), query.after, query.limit);
}

export async function contextFor(db: Db, userId: string, query: ScopeInput & { max_chars: number; limit: number; offset: number }) {
  return renderContext(db, await resolveScope(db, userId, query), {
    maxChars: query.max_chars,
    limit: query.limit,
    offset: query.offset,
  });
}

export async function contentListFor(db: Db, userId: string, query: ScopeInput & { limit: number; offset: number }) {
  return listContent(db, await resolveScope(db, userId, query), query);
}

export async function contentFor(db: Db, userId: string, contentId: string, query: ScopeInput) {
  return readContent(db, await scopeFor(db, userId, query, "content", contentId), contentId);
}

export async function sourceFor(db: Db, userId: string, sourceRevisionId: string, query: ScopeInput) {
  return readSource(db, await scopeFor(db, userId, query, "source", sourceRevisionId), sourceRevisionId);
}
