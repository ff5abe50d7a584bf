import { isUuid } from "../../access/workspaces/access.js";
import { type Db, type DbTx, Prisma } from "../../platform/db.js";
import { notFound } from "../../platform/errors.js";
import { evidenceRowCondition } from "../analysis/scope.js";
import { type ContentSummary, LIMITS, type Relation, type SourceRecord, type SourceSummary } from "./schemas.js";
import { type KnowledgeScope, scopeEntityIds } from "./scope.js";

/**
 * Sources of knowledge records. Citing an original captures its current text as an
 * immutable snapshot (a source revision); an unchanged original keeps its snapshot. Rows
 * that interpret rather than say (summaries, a meeting note's own row: see
 * `isEvidenceRow`) are captured as `interpretation`, which may only be cited as context.
 * A deleted original's snapshots lose their text (see the migration's trigger) and read
 * back as unavailable.
 */
export type TextKind = "original" | "interpretation";

export interface Snapshot {
  id: string;
  contentId: string | null;
  originalId: string;
  entityId: string;
  workspaceId: string;
  textKind: TextKind;
  rowKind: string;
  platform: string;
  url: string;
  title: string;
  author: string;
  publishedAt: Date | null;
  text: string | null;
  textLength: number;
  capturedAt: Date;
  removedAt: Date | null;
  /** Why the original went (its tombstone, src/governance/deletion): deleted, or author_erased; null while it exists. */
  removedReason: string | null;
}

export const allowedRelations = (kind: TextKind): Relation[] =>
  kind === "original" ? ["supports", "contradicts", "context"] : ["context"];

export const isAvailable = (s: Pick<Snapshot, "contentId" | "text">) => s.contentId !== null && s.text !== null;

const SNAPSHOT_COLUMNS = Prisma.sql`s.id, s.content_id AS "contentId", s.original_id AS "originalId", s.entity_id AS "entityId",
  s.workspace_id AS "workspaceId", s.text_kind AS "textKind", s.row_kind AS "rowKind", s.platform, s.url, s.title, s.author,
  s.published_at AS "publishedAt", s.text, s.text_length AS "textLength", s.captured_at AS "capturedAt", s.removed_at AS "removedAt",
  CASE WHEN s.content_id IS NULL
    THEN coalesce((SELECT d.reason FROM content_deletions d WHERE d.content_id = s.original_id), 'deleted') END AS "removedReason"`;

const textKindSql = () => Prisma.sql`CASE WHEN ${evidenceRowCondition()} THEN 'original' ELSE 'interpretation' END`;

export type CaptureOutcome = { ok: true; snapshot: Snapshot } | { ok: false; reason: "not_found" | "too_large"; length?: number };

/**
 * Captures the current text of each original (in the scope's entities) and answers its
 * snapshot. The originals are share-locked for the rest of the transaction, so the text
 * captured is the text checked.
 */
export async function captureSources(tx: DbTx, entityIds: string[], contentIds: string[]): Promise<Map<string, CaptureOutcome>> {
  const ids = [...new Set(contentIds.filter(isUuid))];
  const out = new Map<string, CaptureOutcome>();
  for (const id of contentIds) out.set(id, { ok: false, reason: "not_found" });
  if (ids.length === 0 || entityIds.length === 0) return out;
  const rows = await tx.$queryRaw<{ id: string; length: number }[]>`
    SELECT c.id, char_length(c.content)::int AS length FROM content_store c
    WHERE c.id = ANY(${ids}::uuid[]) AND c.entity_id = ANY(${entityIds}::uuid[])
    ORDER BY c.id FOR SHARE`;
  const capturable: string[] = [];
  for (const row of rows) {
    if (row.length > LIMITS.sourceChars) out.set(row.id, { ok: false, reason: "too_large", length: row.length });
    else capturable.push(row.id);
  }
  if (capturable.length === 0) return out;
  await tx.$executeRaw`
    INSERT INTO knowledge_source_revisions (id, content_id, original_id, entity_id, workspace_id, text_kind, row_kind, platform,
      url, title, author, published_at, text, text_hash, text_length)
    SELECT gen_random_uuid(), c.id, c.id, c.entity_id, c.workspace_id, ${textKindSql()}, c.kind, c.platform, c.url, c.title,
      c.author, c.published_at, c.content, encode(sha256(convert_to(c.content, 'UTF8')), 'hex'), char_length(c.content)
    FROM content_store c WHERE c.id = ANY(${capturable}::uuid[])
    ORDER BY c.id
    ON CONFLICT (original_id, text_hash) DO NOTHING`;
  const snapshots = await tx.$queryRaw<Snapshot[]>`
    SELECT ${SNAPSHOT_COLUMNS} FROM content_store c
    JOIN knowledge_source_revisions s ON s.original_id = c.id AND s.text_hash = encode(sha256(convert_to(c.content, 'UTF8')), 'hex')
    WHERE c.id = ANY(${capturable}::uuid[])`;
  for (const snapshot of snapshots) out.set(snapshot.originalId, { ok: true, snapshot });
  return out;
}

export async function loadSnapshots(db: Db | DbTx, ids: string[]): Promise<Map<string, Snapshot>> {
  const wanted = [...new Set(ids.filter(isUuid))];
  if (wanted.length === 0) return new Map();
  const rows = await db.$queryRaw<Snapshot[]>`
    SELECT ${SNAPSHOT_COLUMNS} FROM knowledge_source_revisions s WHERE s.id = ANY(${wanted}::uuid[])`;
  return new Map(rows.map((r) => [r.id, r]));
}

export function toSourceSummary(s: Snapshot): SourceSummary {
  return {
    source_revision_id: s.id,
    content_id: s.originalId,
    available: isAvailable(s),
    text_kind: s.textKind,
    allowed_relations: allowedRelations(s.textKind),
    kind: s.rowKind,
    platform: s.platform,
    url: s.url,
    title: s.title,
    author: s.author,
    published_at: s.publishedAt?.toISOString() ?? null,
    text_length: s.textLength,
    captured_at: s.capturedAt.toISOString(),
    removed_at: s.removedAt?.toISOString() ?? null,
    removed_reason: s.removedReason,
  };
}

/** Why and when a citation's original went, for a snapshot that is no longer available. */
export function unavailableOf(s: Snapshot | undefined): { reason: string; at: string | null } {
  return { reason: s?.removedReason ?? "deleted", at: s?.removedAt?.toISOString() ?? null };
}

/** One captured snapshot of an original of the scope. */
export async function readSource(db: Db, scope: KnowledgeScope, sourceRevisionId: string): Promise<SourceRecord> {
  const snapshot = (await loadSnapshots(db, [sourceRevisionId])).get(sourceRevisionId);
  const entityIds = await scopeEntityIds(db, scope);
  if (!snapshot || !entityIds.includes(snapshot.entityId)) throw notFound("Source revision");
  return { ...toSourceSummary(snapshot), entity_id: snapshot.entityId, text: isAvailable(snapshot) ? snapshot.text : null };
}

interface ContentRow {
  id: string;
  entityId: string;
  parentId: string | null;
  kind: string;
  platform: string;
  title: string;
  url: string;
  author: string;
  publishedAt: Date | null;
  createdAt: Date;
  textLength: number;
  textKind: TextKind;
}

const CONTENT_COLUMNS = () => Prisma.sql`c.id, c.entity_id AS "entityId", c.parent_id AS "parentId", c.kind, c.platform, c.title,
  c.url, c.author, c.published_at AS "publishedAt", c.created_at AS "createdAt", char_length(c.content)::int AS "textLength",
  ${textKindSql()} AS "textKind"`;

function toContentSummary(row: ContentRow): ContentSummary {
  return {
    content_id: row.id,
    entity_id: row.entityId,
    parent_id: row.parentId,
    kind: row.kind,
    platform: row.platform,
    title: row.title,
    url: row.url,
    author: row.author,
    published_at: row.publishedAt?.toISOString() ?? null,
    created_at: row.createdAt.toISOString(),
    text_length: row.textLength,
    text_kind: row.textKind,
    allowed_relations: allowedRelations(row.textKind),
  };
}

/** The scope's originals, oldest first (live offset paging). */
export async function listContent(db: Db, scope: KnowledgeScope, page: { limit: number; offset: number }) {
  const entityIds = await scopeEntityIds(db, scope);
  const [rows, total] =
    entityIds.length === 0
      ? [[], [{ total: 0 }]]
      : await Promise.all([
          db.$queryRaw<ContentRow[]>`
            SELECT ${CONTENT_COLUMNS()} FROM content_store c WHERE c.entity_id = ANY(${entityIds}::uuid[])
            ORDER BY c.created_at, c.id LIMIT ${page.limit} OFFSET ${page.offset}`,
          db.$queryRaw<{ total: number }[]>`
            SELECT count(*)::int AS total FROM content_store c WHERE c.entity_id = ANY(${entityIds}::uuid[])`,
        ]);
  const count = rows.length;
  const all = total[0]?.total ?? 0;
  return {
    content: rows.map(toContentSummary),
    count,
    total: all,
    limit: page.limit,
    offset: page.offset,
    next_offset: page.offset + count < all && count > 0 ? page.offset + count : null,
  };
}

/** One original of the scope with its full text and metadata. */
export async function readContent(db: Db, scope: KnowledgeScope, contentId: string) {
  const entityIds = await scopeEntityIds(db, scope);
  if (!isUuid(contentId) || entityIds.length === 0) throw notFound("Content");
  const rows = await db.$queryRaw<(ContentRow & { text: string; metadata: unknown; engagement: unknown })[]>`
    SELECT ${CONTENT_COLUMNS()}, c.content AS text, c.metadata, c.engagement FROM content_store c
    WHERE c.id = ${contentId}::uuid AND c.entity_id = ANY(${entityIds}::uuid[])`;
  const row = rows[0];
  if (!row) throw notFound("Content");
  return { ...toContentSummary(row), text: row.text, metadata: row.metadata ?? null, engagement: row.engagement ?? {} };
}
