import { visibleWorkspaceIds } from "../../access/workspaces/access.js";
import { type Db, Prisma } from "../../platform/db.js";
import { NOTE_ROW_KIND } from "../../platform/vocabulary.js";
import type { SearchMode } from "./schemas.js";

/**
 * What an analysis may read: stored originals of the owner's workspaces, narrowed by
 * entity, project, search mode, platforms or an explicit list of rows. Resolved when the
 * analysis runs (not when it was requested), so access removed in between is honoured.
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

export interface ScopeRequest {
  userId: string;
  /** The analysis's own workspace (its entity's or project's): in scope even for a requester who has left it. */
  workspaceId: string | null;
  entityId: string | null;
  projectId: string | null;
  searchMode: SearchMode | undefined;
  platforms: string[];
  providedSources: string[];
}

export async function resolveScope(db: Db, request: ScopeRequest): Promise<AnalysisScope> {
  // An analysis that was started goes on after its requester left the workspace: its own stays in scope.
  const visible = await visibleWorkspaceIds(db, request.userId);
  const workspaceIds = request.workspaceId && !visible.includes(request.workspaceId) ? [...visible, request.workspaceId] : visible;
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
  if (workspaceIds.length === 0) emptyReasons.push("The requester belongs to no workspace, so no stored originals are visible.");

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
