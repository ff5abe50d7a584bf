import { entityForUser, projectForUser, requireWriter, visibleWorkspaceIds } from "../../access/workspaces/access.js";
import { type Db, Prisma } from "../../platform/db.js";
import { AppError, notFound } from "../../platform/errors.js";
import { NOTE_ROW_KIND } from "../../platform/vocabulary.js";
import type { SearchMode } from "./schemas.js";

/**
 * What an analysis may read: the stored originals of the one workspace it belongs to, narrowed by
 * entity, project, search mode, platforms or an explicit list of rows.
 *
 * The workspace is decided when the analysis is requested (`analysisWorkspaceFor`), from what the
 * request names: an entity's or a project's workspace, the workspace of the provided rows, or, when it
 * names nothing, the caller's one workspace. The caller must be an editor there, the analysis is
 * stored as that workspace's, and it reads nothing else. Within it, the rest is resolved when the
 * analysis runs (not when it was requested), so an entity or a row gone in between is honoured.
 *
 * Search modes (platform classes):
 * - multi_source (default): every platform.
 * - web_only: public platforms only (not the first-party ones below).
 * - user_only: what the user's own agents stored: agent, claude_code, codex.
 * - knowledge: the team's own conversations: meetingnotes (transcripts) and slack.
 * - user_first: every platform, first-party rows ranked ahead of public ones.
 * `platforms` (reddit, twitter, github, news = web + hackernews) narrows further.
 * `provided_sources` names the rows exactly; mode and platforms do not apply to them.
 *
 * In every mode, only rows that say something are evidence: never a summary, nor a row
 * that only describes where the evidence came from (see `isEvidenceRow`).
 */
export const FIRST_PARTY_PLATFORMS = ["meetingnotes", "slack", "agent", "claude_code", "codex"] as const;
const AGENT_PLATFORMS = ["agent", "claude_code", "codex"];
const KNOWLEDGE_PLATFORMS = ["meetingnotes", "slack"];

export interface AnalysisScope {
  workspaceIds: string[];
  /** null: every entity of the workspaces. */
  entityIds: string[] | null;
  /** null: every platform. */
  platforms: string[] | null;
  excludeFirstParty: boolean;
  /** null: retrieval decides; otherwise exactly these rows. */
  contentIds: string[] | null;
  preferFirstParty: boolean;
  /** Why the scope is empty, when it is known to be. */
  emptyReasons: string[];
  describe: Record<string, unknown>;
}

export const isFirstParty = (platform: string) => (FIRST_PARTY_PLATFORMS as readonly string[]).includes(platform);

export interface PlatformFilter {
  /** null: no list (every platform the mode allows). */
  include: string[] | null;
  excludeFirstParty: boolean;
}

export function platformFilter(mode: SearchMode | undefined, requested: readonly string[]): PlatformFilter {
  const wanted = requested.length > 0 ? [...new Set(requested.flatMap((p) => (p === "news" ? ["web", "hackernews"] : [p])))] : null;
  const within = (allowed: string[]) => (wanted ? wanted.filter((p) => allowed.includes(p)) : allowed);
  if (mode === "user_only") return { include: within(AGENT_PLATFORMS), excludeFirstParty: false };
  if (mode === "knowledge") return { include: within(KNOWLEDGE_PLATFORMS), excludeFirstParty: false };
  if (mode === "web_only") return { include: wanted ? wanted.filter((p) => !isFirstParty(p)) : null, excludeFirstParty: true };
  return { include: wanted, excludeFirstParty: false };
}

/** What an analysis request names, for deciding the workspace it reads. */
export interface ScopeNames {
  entityId: string | null;
  projectId: string | null;
  providedSources: string[];
}

const scopeRequired = (detail: string) => new AppError("scope_required", detail, { extra: { accepts: ["entity_id", "project_id"] } });

/**
 * The workspaces whose stored originals a request names, each id checked first (one the caller cannot
 * see is a 404, as an unknown one): the entity's, else the project's, else the provided rows', else
 * (nothing named) every workspace of the caller's.
 */
async function workspacesNamed(db: Db, userId: string, names: ScopeNames): Promise<string[]> {
  const entity = names.entityId ? await entityForUser(db, userId, names.entityId) : null;
  const project = names.projectId ? await projectForUser(db, userId, names.projectId) : null;
  const sources = names.providedSources.length > 0 ? await workspacesOfRows(db, userId, names.providedSources) : null;
  if (entity) return [entity.workspaceId];
  if (project) return [project.workspaceId];
  if (sources) return sources;
  return (await visibleWorkspaceIds(db, userId)).sort();
}

/** The workspaces of the rows, each of which the caller must see (404 for the first that is not). */
async function workspacesOfRows(db: Db, userId: string, ids: string[]): Promise<string[]> {
  const found = await db.content.findMany({
    where: { id: { in: ids }, workspaceId: { in: await visibleWorkspaceIds(db, userId) } },
    select: { id: true, workspaceId: true },
  });
  const seen = new Map(found.map((r) => [r.id, r.workspaceId]));
  const missing = ids.find((id) => !seen.has(id));
  if (missing) throw notFound(`Content ${missing}`);
  return [...new Set(seen.values())].sort();
}

/**
 * The workspace an analysis reads and belongs to, decided when it is requested, however the request
 * names its scope: the caller must be an editor or above in every workspace whose originals the
 * request would read (403 `forbidden` for a viewer, so a viewer cannot publish the workspace's
 * originals through an analysis of no scope or of bare content ids), and those must be one workspace
 * (400 `scope_required` otherwise: an analysis, its links and its readers are one workspace's). Null
 * for a caller of no workspace: the analysis reads nothing.
 */
export async function analysisWorkspaceFor(db: Db, userId: string, names: ScopeNames): Promise<string | null> {
  const workspaces = await workspacesNamed(db, userId, names);
  for (const workspaceId of workspaces) await requireWriter(db, userId, workspaceId, "start analyses");
  if (workspaces.length > 1) {
    throw scopeRequired(
      names.providedSources.length > 0
        ? `The provided sources belong to ${workspaces.length} workspaces, and an analysis reads one: send the sources of one workspace, or name its entity_id or project_id.`
        : `You are a member of ${workspaces.length} workspaces, and an analysis reads one: name the entity_id or project_id to analyse.`,
    );
  }
  return workspaces[0] ?? null;
}

export interface ScopeRequest {
  userId: string;
  /**
   * The analysis's own workspace, the one it reads: in scope even for a requester who has left it (an
   * analysis that was started goes on). Null: a requester of no workspace, and nothing is read.
   */
  workspaceId: string | null;
  entityId: string | null;
  projectId: string | null;
  searchMode: SearchMode | undefined;
  platforms: string[];
  providedSources: string[];
}

export async function resolveScope(db: Db, request: ScopeRequest): Promise<AnalysisScope> {
  // Its own workspace and nothing else (migration 20261213090000_analysis_workspace gave one to those stored without).
  const workspaceIds = request.workspaceId ? [request.workspaceId] : [];
  const emptyReasons: string[] = [];
  let entityIds: string[] | null = null;

  if (request.entityId) {
    const entity = await db.entity.findFirst({
      where: { id: request.entityId, workspaceId: { in: workspaceIds } },
      select: { id: true, projectId: true },
    });
    entityIds = entity ? [entity.id] : [];
    if (!entity) emptyReasons.push("The entity is no longer visible to the requester.");
    else if (request.projectId && entity.projectId !== request.projectId) {
      entityIds = [];
      emptyReasons.push("The entity does not belong to the project, so the scope (entity within project) is empty.");
    }
  } else if (request.projectId) {
    const entities = await db.entity.findMany({
      where: { projectId: request.projectId, workspaceId: { in: workspaceIds } },
      select: { id: true },
      orderBy: { id: "asc" },
    });
    entityIds = entities.map((e) => e.id);
    if (entityIds.length === 0) emptyReasons.push("The project has no tracked entities (or is no longer visible).");
  }

  const filter = platformFilter(request.searchMode, request.platforms);
  const contentIds = request.providedSources.length > 0 ? [...new Set(request.providedSources)] : null;
  if (!contentIds && filter.include && filter.include.length === 0) {
    emptyReasons.push(
      `No platform is left after combining search_mode '${request.searchMode ?? "multi_source"}' with platforms [${request.platforms.join(", ")}].`,
    );
  }
  if (workspaceIds.length === 0) {
    emptyReasons.push("The analysis belongs to no workspace (its requester was a member of none), so no stored originals are in scope.");
  }

  return {
    workspaceIds,
    entityIds,
    platforms: contentIds ? null : filter.include,
    excludeFirstParty: contentIds ? false : filter.excludeFirstParty,
    contentIds,
    preferFirstParty: request.searchMode === "user_first",
    emptyReasons,
    describe: {
      entity_id: request.entityId,
      project_id: request.projectId,
      search_mode: request.searchMode ?? "multi_source",
      platforms: contentIds ? null : filter.include,
      first_party: contentIds ? "included" : filter.excludeFirstParty ? "excluded" : "included",
      provided_sources: contentIds?.length ?? 0,
    },
  };
}

/**
 * Stored rows that are never evidence: summaries (kind `summary`), and rows whose
 * `metadata.kind` marks them as a description of their material rather than part of it:
 * a meeting note's own row (title, date, owner, attendees, calendar event), whose
 * transcript utterances are the evidence.
 */
const NOT_EVIDENCE_ROW_KINDS = ["summary"];
const NOT_EVIDENCE_METADATA_KINDS = [NOTE_ROW_KIND];

export function isEvidenceRow(row: { kind: string; metadata: unknown }): boolean {
  if (NOT_EVIDENCE_ROW_KINDS.includes(row.kind)) return false;
  const kind = row.metadata !== null && typeof row.metadata === "object" ? (row.metadata as { kind?: unknown }).kind : undefined;
  return !(typeof kind === "string" && NOT_EVIDENCE_METADATA_KINDS.includes(kind));
}

/**
 * `isEvidenceRow` as SQL over alias `c`. The predicate of content_store_evidence_scope_idx (migration
 * 20261127120000_scope_count_indexes) and the opinion_units seen_at trigger repeat this rule: change
 * them with it, or the scope counts stop using that index.
 */
export const evidenceRowCondition = () =>
  Prisma.sql`c.kind <> ALL(${NOT_EVIDENCE_ROW_KINDS}::text[]) AND coalesce(c.metadata->>'kind', '') <> ALL(${NOT_EVIDENCE_METADATA_KINDS}::text[])`;

/** The SQL condition (over alias `c`) for rows in scope. */
export function scopeCondition(scope: AnalysisScope): Prisma.Sql {
  const parts: Prisma.Sql[] = [Prisma.sql`c.workspace_id = ANY(${scope.workspaceIds}::uuid[])`, evidenceRowCondition()];
  if (scope.entityIds) parts.push(Prisma.sql`c.entity_id = ANY(${scope.entityIds}::uuid[])`);
  if (scope.platforms) parts.push(Prisma.sql`c.platform = ANY(${scope.platforms}::text[])`);
  if (scope.excludeFirstParty) {
    parts.push(Prisma.sql`c.platform <> ALL(${[...FIRST_PARTY_PLATFORMS]}::text[])`);
  }
  if (scope.contentIds) parts.push(Prisma.sql`c.id = ANY(${scope.contentIds}::uuid[])`);
  return Prisma.join(parts, " AND ");
}

/**
 * Whether the scope is whole entities (an entity, a project's or a workspace's, every platform, no
 * provided rows): what the per-entity roll-ups answer (opinion_source_rollups, content_count_deltas).
 */
export const coversWholeEntities = (scope: AnalysisScope) =>
  scope.platforms === null && !scope.excludeFirstParty && scope.contentIds === null;

/** The scope's entities, as a subquery of ids (the workspaces' entities when it names none). */
export function scopeEntities(scope: AnalysisScope): Prisma.Sql {
  return scope.entityIds
    ? Prisma.sql`SELECT e.id FROM entities e WHERE e.id = ANY(${scope.entityIds}::uuid[]) AND e.workspace_id = ANY(${scope.workspaceIds}::uuid[])`
    : Prisma.sql`SELECT e.id FROM entities e WHERE e.workspace_id = ANY(${scope.workspaceIds}::uuid[])`;
}

const scopeEntityIds = new WeakMap<AnalysisScope, Promise<string[]>>();

/**
 * The ids of the scope's entities (those it names, else every entity of its workspaces), in id order:
 * read once per resolved scope (retrieval's two rankings and the top-up of one analysis share it).
 */
export function entitiesInScope(db: Db, scope: AnalysisScope): Promise<string[]> {
  let ids = scopeEntityIds.get(scope);
  if (!ids) {
    ids = db.$queryRaw<{ id: string }[]>`${scopeEntities(scope)} ORDER BY e.id`.then((rows) => rows.map((r) => r.id));
    scopeEntityIds.set(scope, ids);
  }
  return ids;
}

/**
 * `child(part)`, a SELECT ordered by `order` and limited (one entity's rows, say), for each part, merged
 * by `order` (over the children's output columns, alias `x`) and limited. PostgreSQL merges the
 * children's index scans (Merge Append) and reads each only as far as the limit needs, so a read of the
 * newest rows costs what the limit asks, however many entities and rows the scope holds.
 */
export function mergedReads<T>(parts: readonly T[], child: (part: T) => Prisma.Sql, order: Prisma.Sql, limit: number): Prisma.Sql {
  if (parts.length === 0) throw new Error("mergedReads needs at least one part");
  const reads = parts.map((part) => Prisma.sql`(${child(part)})`);
  return Prisma.sql`SELECT x.* FROM (${Prisma.join(reads, " UNION ALL ")}) x ORDER BY ${order} LIMIT ${limit}`;
}

/**
 * The scope's `limit` most recently stored rows, newest first (id and `columns` over alias `c`, plus
 * `stored_at`), read along each entity's (entity_id, created_at, id) index and merged.
 */
export function newestInScope(scope: AnalysisScope, entityIds: string[], columns: Prisma.Sql | null, limit: number): Prisma.Sql {
  const more = columns ? Prisma.sql`, ${columns}` : Prisma.empty;
  return mergedReads(
    entityIds,
    (entity) => Prisma.sql`SELECT c.id, c.created_at AS stored_at ${more} FROM content_store c
      WHERE c.entity_id = ${entity}::uuid AND ${scopeCondition(scope)}
      ORDER BY c.created_at DESC, c.id DESC LIMIT ${limit}`,
    Prisma.sql`x.stored_at DESC, x.id DESC`,
    limit,
  );
}

export function scopeIsEmpty(scope: AnalysisScope): boolean {
  return (
    scope.workspaceIds.length === 0 ||
    (scope.entityIds !== null && scope.entityIds.length === 0) ||
    (scope.platforms !== null && scope.platforms.length === 0) ||
    (scope.contentIds !== null && scope.contentIds.length === 0)
  );
}
