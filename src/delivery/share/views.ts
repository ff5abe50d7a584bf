import { toAnalysisRecord } from "../../insights/analysis/service.js";
import { insightOf, readThemeSources } from "../../insights/analysis/theme-sources-read.js";
import type { SourceSort, SourcesCursor } from "../../insights/analysis/theme-sources-schemas.js";
import { summaryOfEntity } from "../../insights/intelligence/service.js";
import { utf16Index } from "../../insights/knowledge/quotes.js";
import { readInsight } from "../../insights/knowledge/records.js";
import type { ResolvedEvidence } from "../../insights/knowledge/schemas.js";
import { isAvailable, loadSnapshots, toSourceSummary } from "../../insights/knowledge/sources.js";
import type { Db } from "../../platform/db.js";
import { analysisLinkWorkspace, SHARE_PATH, type ShareLinkRow } from "./links.js";
import type {
  AnalysisPageModel,
  EntityPageModel,
  KnowledgeCitation,
  KnowledgePageModel,
  LinkFrame,
  ThemeSourcesPageModel,
  VolumePoint,
} from "./pages/model.js";

/**
 * What a share link's page shows, read for the link's workspace alone: the resource must still
 * exist and still belong to the workspace the link was made in, or the page is not found (null).
 * These reads act for nobody: the link, not a member, is what authorises them.
 */
const frameOf = (link: ShareLinkRow): LinkFrame => ({ expiresAt: link.expiresAt.toISOString(), renderedAt: new Date().toISOString() });

const RUNNING = new Set(["queued", "running"]);

export async function analysisPage(db: Db, link: ShareLinkRow, token: string): Promise<AnalysisPageModel | null> {
  const row = await db.analysis.findUnique({ where: { id: link.resourceId } });
  if (!row || (await analysisLinkWorkspace(db, row)) !== link.workspaceId) return null;
  return {
    frame: frameOf(link),
    analysis: toAnalysisRecord(row),
    subject: await subjectName(db, row.entityId, row.projectId),
    eventsPath: RUNNING.has(row.status) ? `${SHARE_PATH}/${token}/events` : null,
    sharePath: `${SHARE_PATH}/${token}`,
  };
}

/** Sources a shared theme's page lists at a time. */
export const SHARED_SOURCES_PER_PAGE = 50;

/**
 * One theme of the link's analysis with a page of its sources (`/share/{token}/insights/{n}`): only the
 * analysis the link opens, while it is still the link's workspace's; null for any other link, an insight
 * it does not have, or a cursor of another list.
 */
export async function themeSourcesPage(
  db: Db,
  link: ShareLinkRow,
  token: string,
  request: { n: number; sort: SourceSort; cursor: { raw: string; value: SourcesCursor } | null },
): Promise<ThemeSourcesPageModel | null> {
  if (link.resourceKind !== "analysis") return null;
  const row = await db.analysis.findUnique({ where: { id: link.resourceId } });
  if (!row || (await analysisLinkWorkspace(db, row)) !== link.workspaceId) return null;
  const { n, sort, cursor } = request;
  // A cursor of the other order names no page of this one.
  if (cursor && (cursor.value.kind === "newest") !== (sort === "newest")) return null;
  let insight: ReturnType<typeof insightOf>;
  try {
    insight = insightOf(row, n);
  } catch {
    return null;
  }
  return {
    frame: frameOf(link),
    question: row.question,
    subject: await subjectName(db, row.entityId, row.projectId),
    insight,
    n,
    sharePath: `${SHARE_PATH}/${token}`,
    sources: await readThemeSources(db, row, n, { sort, limit: SHARED_SOURCES_PER_PAGE, cursor: cursor?.value }),
    cursor: cursor?.raw ?? null,
    sort,
  };
}

/** Whether the analysis a link opens is still the link's (the event stream checks this before relaying). */
export async function sharedAnalysisId(db: Db, link: ShareLinkRow): Promise<string | null> {
  if (link.resourceKind !== "analysis") return null;
  const row = await db.analysis.findUnique({ where: { id: link.resourceId } });
  return row && (await analysisLinkWorkspace(db, row)) === link.workspaceId ? row.id : null;
}

async function subjectName(db: Db, entityId: string | null, projectId: string | null): Promise<string | null> {
  if (entityId) return (await db.entity.findUnique({ where: { id: entityId }, select: { name: true } }))?.name ?? null;
  if (projectId) return (await db.project.findUnique({ where: { id: projectId }, select: { name: true } }))?.name ?? null;
  return null;
}

/** Characters of captured text shown on each side of a cited quote. */
const CONTEXT_CHARS = 280;

export async function knowledgePage(db: Db, link: ShareLinkRow): Promise<KnowledgePageModel | null> {
  const insight = await db.knowledgeInsight.findUnique({ where: { id: link.resourceId } });
  if (!insight || insight.workspaceId !== link.workspaceId) return null;
  const scope = {
    kind: insight.entityId ? ("entity" as const) : ("project" as const),
    id: insight.scopeId,
    entityId: insight.entityId,
    projectId: insight.projectId,
    workspaceId: insight.workspaceId,
    role: "viewer",
  };
  const read = await readInsight(db, scope, insight.id, { includeEvidence: true });
  const evidence = read.resolved_evidence ?? [];
  const snapshots = await loadSnapshots(
    db,
    evidence.map((e) => e.source_revision_id),
  );
  const citations: KnowledgeCitation[] = evidence.map((e) => {
    const snapshot = snapshots.get(e.source_revision_id);
    return {
      ...e,
      source: snapshot ? toSourceSummary(snapshot) : null,
      context: snapshot && isAvailable(snapshot) && snapshot.text && e.span ? around(snapshot.text, e) : null,
    };
  });
  const [revisions, counts] = await Promise.all([
    db.knowledgeInsightRevision.findMany({ where: { insightId: insight.id }, orderBy: { revision: "desc" } }),
    db.knowledgeRevisionEvidence.groupBy({ by: ["revision"], where: { insightId: insight.id }, _count: { _all: true } }),
  ]);
  const countOf = new Map(counts.map((c) => [c.revision, c._count._all]));
  return {
    frame: frameOf(link),
    record: read.record,
    subject: await subjectName(db, insight.entityId, insight.projectId),
    citations,
    history: revisions.map((r) => ({
      revision: r.revision,
      title: r.title,
      summary: r.summary,
      origin: r.origin,
      review_state: r.reviewState,
      evidence_count: countOf.get(r.revision) ?? 0,
      created_at: r.createdAt.toISOString(),
    })),
  };
}

/** The captured text around a quote, cut at word boundaries where one is near. */
function around(text: string, e: ResolvedEvidence): KnowledgeCitation["context"] {
  const from = utf16Index(text, e.start);
  const to = utf16Index(text, e.end);
  if (from < 0 || to < 0) return null;
  const beforeStart = Math.max(0, from - CONTEXT_CHARS);
  const afterEnd = Math.min(text.length, to + CONTEXT_CHARS);
  const trimStart = beforeStart === 0 ? 0 : text.indexOf(" ", beforeStart) + 1 || beforeStart;
  const lastSpace = text.lastIndexOf(" ", afterEnd);
  const trimEnd = afterEnd === text.length || lastSpace <= to ? afterEnd : lastSpace;
  return {
    before: (trimStart > 0 ? "…" : "") + text.slice(Math.min(trimStart, from), from),
    quote: text.slice(from, to),
    after: text.slice(to, trimEnd) + (trimEnd < text.length ? "…" : ""),
  };
}

const WINDOW_DAYS = 30;
const LATEST = 10;

export async function entityPage(db: Db, link: ShareLinkRow): Promise<EntityPageModel | null> {
  const entity = await db.entity.findUnique({ where: { id: link.resourceId } });
  if (!entity || entity.workspaceId !== link.workspaceId) return null;
  const [summary, volume, jobs, analyses] = await Promise.all([
    summaryOfEntity(db, entity, WINDOW_DAYS),
    volumeOf(db, entity.id, 2 * WINDOW_DAYS),
    db.collectionJob.findMany({
      where: { entityId: entity.id },
      orderBy: [{ createdAt: "desc" }, { id: "desc" }],
      take: LATEST,
      select: { id: true, status: true, platforms: true, createdAt: true, finishedAt: true },
    }),
    db.analysis.findMany({
      where: { entityId: entity.id },
      orderBy: [{ createdAt: "desc" }, { id: "desc" }],
      take: LATEST,
      select: { id: true, question: true, status: true, createdAt: true, finishedAt: true },
    }),
  ]);
  const iso = (d: Date | null) => (d ? d.toISOString() : null);
  return {
    frame: frameOf(link),
    summary,
    volume: { bucket: "day", points: volume },
    jobs: jobs.map((j) => ({
      id: j.id,
      status: j.status,
      platforms: j.platforms,
      created_at: j.createdAt.toISOString(),
      finished_at: iso(j.finishedAt),
    })),
    analyses: analyses.map((a) => ({
      id: a.id,
      question: a.question,
      status: a.status,
      created_at: a.createdAt.toISOString(),
      finished_at: iso(a.finishedAt),
    })),
  };
}

/** Stored originals per UTC day over the last `days` days, every day present (zero when none). */
async function volumeOf(db: Db, entityId: string, days: number): Promise<VolumePoint[]> {
  const rows = await db.$queryRaw<{ day: string; sources: number; comments: number }[]>`
    WITH days AS (
      SELECT generate_series((now() AT TIME ZONE 'UTC')::date - ${days - 1}::int, (now() AT TIME ZONE 'UTC')::date, '1 day')::date AS day
    ), counts AS (
      SELECT (coalesce(c.published_at, c.created_at) AT TIME ZONE 'UTC')::date AS day,
        count(*) FILTER (WHERE c.kind <> 'comment')::int AS sources,
        count(*) FILTER (WHERE c.kind = 'comment')::int AS comments
      FROM content_store c
      WHERE c.entity_id = ${entityId}::uuid
        AND coalesce(c.published_at, c.created_at) >= (now() AT TIME ZONE 'UTC')::date - ${days - 1}::int
      GROUP BY 1
    )
    SELECT to_char(d.day, 'YYYY-MM-DD') AS day, coalesce(c.sources, 0)::int AS sources, coalesce(c.comments, 0)::int AS comments
    FROM days d LEFT JOIN counts c USING (day) ORDER BY d.day`;
  return rows.map((r) => ({ start: r.day, sources: r.sources, comments: r.comments }));
}
