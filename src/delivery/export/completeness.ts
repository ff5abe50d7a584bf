import { entityForUser, isMember, visibleWorkspaceIds } from "../../access/workspaces/access.js";
import { sumRemovedAfter } from "../../intake/coverage/removals.js";
import { type LatestCoverage, latestCoverage } from "../../intake/coverage/service.js";
import type { Db } from "../../platform/db.js";
import { notFound } from "../../platform/errors.js";
import type { CompletenessQuery, CompletenessResponse, PlatformCompleteness } from "./schemas.js";

/**
 * The completeness audit (spec operation 11): before a corpus is treated as
 * comprehensive, how many stored originals per platform have text, a URL and
 * enrichment, and what coverage the collectors last proved.
 *
 * Rules:
 * - The platforms in scope of an entity are those it declares, those it has rows for and
 *   those a collector recorded coverage for (or only `platform` when given).
 * - Coverage is proven only by a latest record of `exhaustive`; `bounded` and `sampled`
 *   are partial, `blocked` means the collector could not reach the source.
 * - A row is enriched when it has an embedding and its opinion units were extracted: it
 *   has opinion units, or `enriched_at` is set (extraction ran and found none).
 * - `comprehensive` holds when at least one platform is in scope and every platform of
 *   every entity in scope has proven coverage, every row enriched and every row text.
 *   Rows without a URL are reported as gaps but do not decide it.
 * - Originals deleted on purpose (a delete, an author erasure: src/governance/deletion) are not stored: they
 *   are counted as `deleted` (from their tombstones), with how many went after the latest coverage
 *   was recorded, never as rows nor as missing. The latest record's own tally of the rows its run
 *   stored and that were removed since is `coverage_removed_after` (src/intake/coverage/removals.ts).
 */
interface ScopeEntity {
  id: string;
  name: string;
  workspaceId: string;
  platforms: string[];
}

interface CountsRow {
  entity_id: string;
  platform: string;
  rows: number;
  comments: number;
  with_text: number;
  with_url: number;
  with_embedding: number;
  with_opinion_units: number;
  with_enrichment: number;
}

interface DeletedRow {
  entity_id: string;
  platform: string;
  at: Date;
}

const STATE_RANK: Record<string, number> = { unknown: 1, blocked: 2, sampled: 3, bounded: 4, exhaustive: 5 };

async function scopeEntities(
  db: Db,
  userId: string,
  query: CompletenessQuery,
): Promise<{ entities: ScopeEntity[]; workspaceIds: string[] }> {
  const pick = { id: true, name: true, workspaceId: true, platforms: true, createdAt: true } as const;
  if (query.entity_id) {
    const entity = await entityForUser(db, userId, query.entity_id);
    if (query.workspace_id && entity.workspaceId !== query.workspace_id) throw notFound("Entity");
    return { entities: [entity], workspaceIds: [entity.workspaceId] };
  }
  let workspaceIds: string[];
  if (query.workspace_id) {
    if (!(await isMember(db, userId, query.workspace_id))) throw notFound("Workspace");
    workspaceIds = [query.workspace_id];
  } else {
    workspaceIds = await visibleWorkspaceIds(db, userId);
  }
  const entities = await db.entity.findMany({
    where: { workspaceId: { in: workspaceIds } },
    select: pick,
    orderBy: [{ createdAt: "asc" }, { id: "asc" }],
  });
  return { entities, workspaceIds: [...workspaceIds].sort() };
}

/**
 * The audit's counts per entity and platform: sums of content_count_deltas, which triggers on content_store
 * and opinion_units keep exact (migration 20261130100000_content_audit_deltas), so no stored row is read.
 */
async function contentCounts(db: Db, entityIds: string[], platform: string | undefined): Promise<CountsRow[]> {
  if (entityIds.length === 0) return [];
  return db.$queryRaw<CountsRow[]>`
    SELECT d.entity_id, d.platform,
      sum(d.rows)::int AS rows,
      sum(d.comments)::int AS comments,
      sum(d.with_text)::int AS with_text,
      sum(d.with_url)::int AS with_url,
      sum(d.with_embedding)::int AS with_embedding,
      sum(d.with_units)::int AS with_opinion_units,
      sum(d.with_enrichment)::int AS with_enrichment
    FROM content_count_deltas d
    WHERE d.entity_id = ANY(${entityIds}::uuid[]) AND (${platform ?? null}::text IS NULL OR d.platform = ${platform ?? null}::text)
    GROUP BY d.entity_id, d.platform
    HAVING sum(d.rows) <> 0`;
}

/** When each deleted original of the entities went, per platform (ids and times only). */
async function deletions(db: Db, entityIds: string[], platform: string | undefined): Promise<DeletedRow[]> {
  if (entityIds.length === 0) return [];
  return db.$queryRaw<DeletedRow[]>`
    SELECT entity_id, platform, deleted_at AS at FROM content_deletions
    WHERE entity_id = ANY(${entityIds}::uuid[]) AND (${platform ?? null}::text IS NULL OR platform = ${platform ?? null}::text)`;
}

const emptyCounts = () => ({
  rows: 0,
  sources: 0,
  comments: 0,
  with_text: 0,
  with_url: 0,
  with_embedding: 0,
  with_opinion_units: 0,
  with_enrichment: 0,
  deleted: 0,
});

function platformRow(
  platform: string,
  counts: CountsRow | undefined,
  coverage: LatestCoverage | undefined,
  deleted: Date[],
): PlatformCompleteness {
  const c = counts ?? { ...emptyCounts(), entity_id: "", platform };
  const last = deleted.reduce<Date | null>((max, at) => (max === null || at > max ? at : max), null);
  return {
    platform,
    rows: c.rows,
    sources: c.rows - c.comments,
    comments: c.comments,
    with_text: c.with_text,
    with_url: c.with_url,
    with_embedding: c.with_embedding,
    with_opinion_units: c.with_opinion_units,
    with_enrichment: c.with_enrichment,
    deleted: deleted.length,
    coverage_state: coverage?.coverageState ?? null,
    coverage_recorded_at: coverage?.recordedAt.toISOString() ?? null,
    coverage_finished_at: coverage?.finishedAt ?? null,
    coverage_run_id: coverage?.runId ?? null,
    coverage_proven: coverage?.coverageState === "exhaustive",
    enrichment_complete: c.with_enrichment === c.rows,
    deleted_after_coverage: coverage ? deleted.filter((at) => at > coverage.recordedAt).length : 0,
    last_deleted_at: last?.toISOString() ?? null,
    coverage_removed_after: coverage?.removedAfter ?? null,
  };
}

function gapsOf(entity: ScopeEntity, p: PlatformCompleteness, coverage: LatestCoverage | undefined): string[] {
  const where = `${p.platform} for ${entity.name} (${entity.id})`;
  const gaps: string[] = [];
  if (!coverage) {
    gaps.push(`${where}: no coverage has been recorded, so nothing proves the collection is complete.`);
  } else if (!p.coverage_proven) {
    const why =
      coverage.coverageState === "blocked"
        ? "the collector could not reach the source"
        : coverage.coverageState === "unknown"
          ? "the collector did not know whether it saw everything"
          : `'${coverage.coverageState}' is partial coverage`;
    gaps.push(
      `${where}: the latest coverage (run ${coverage.runId}, recorded ${p.coverage_recorded_at}) is '${coverage.coverageState}': ${why}; only 'exhaustive' proves coverage.`,
    );
  }
  const missing = (n: number, what: string, plural: string) =>
    `${where}: ${n} of ${p.rows} ${p.rows === 1 ? "row" : "rows"} ${n === 1 ? what : plural}`;
  if (p.rows > p.with_text) gaps.push(`${missing(p.rows - p.with_text, "has no text", "have no text")}.`);
  if (p.rows > p.with_enrichment) {
    gaps.push(
      `${missing(p.rows - p.with_enrichment, "is not enriched yet", "are not enriched yet")} (${p.rows - p.with_embedding} without an embedding, ${p.rows - p.with_opinion_units} without opinion units).`,
    );
  }
  if (p.rows > p.with_url) gaps.push(`${missing(p.rows - p.with_url, "has no URL", "have no URL")}.`);
  return gaps;
}

function aggregate(platform: string, rows: PlatformCompleteness[]): PlatformCompleteness {
  const sum = (f: (r: PlatformCompleteness) => number) => rows.reduce((acc, r) => acc + f(r), 0);
  // The weakest proof decides: the lowest state, and the oldest time among the latest records.
  const weakest = rows.reduce<PlatformCompleteness | undefined>((worst, r) => {
    if (!worst) return r;
    const rank = (x: PlatformCompleteness) => (x.coverage_state ? (STATE_RANK[x.coverage_state] ?? 0) : 0);
    if (rank(r) !== rank(worst)) return rank(r) < rank(worst) ? r : worst;
    return (r.coverage_recorded_at ?? "") < (worst.coverage_recorded_at ?? "") ? r : worst;
  }, undefined);
  return {
    platform,
    rows: sum((r) => r.rows),
    sources: sum((r) => r.sources),
    comments: sum((r) => r.comments),
    with_text: sum((r) => r.with_text),
    with_url: sum((r) => r.with_url),
    with_embedding: sum((r) => r.with_embedding),
    with_opinion_units: sum((r) => r.with_opinion_units),
    with_enrichment: sum((r) => r.with_enrichment),
    deleted: sum((r) => r.deleted),
    coverage_state: weakest?.coverage_state ?? null,
    coverage_recorded_at: weakest?.coverage_recorded_at ?? null,
    coverage_finished_at: weakest?.coverage_finished_at ?? null,
    coverage_run_id: weakest?.coverage_run_id ?? null,
    coverage_proven: rows.every((r) => r.coverage_proven),
    enrichment_complete: rows.every((r) => r.enrichment_complete),
    deleted_after_coverage: sum((r) => r.deleted_after_coverage),
    last_deleted_at: rows.reduce<string | null>(
      (max, r) => (r.last_deleted_at && (!max || r.last_deleted_at > max) ? r.last_deleted_at : max),
      null,
    ),
    coverage_removed_after: rows.some((r) => r.coverage_removed_after)
      ? sumRemovedAfter(rows.flatMap((r) => (r.coverage_removed_after ? [r.coverage_removed_after] : [])))
      : null,
  };
}

export async function completeness(db: Db, userId: string, query: CompletenessQuery): Promise<CompletenessResponse> {
  const { entities, workspaceIds } = await scopeEntities(db, userId, query);
  const ids = entities.map((e) => e.id);
  const [counts, coverage, deleted] = await Promise.all([
    contentCounts(db, ids, query.platform),
    latestCoverage(db, ids, query.platform),
    deletions(db, ids, query.platform),
  ]);

  const gaps: string[] = [];
  const perPlatform = new Map<string, PlatformCompleteness[]>();
  const entityReports = entities.map((entity) => {
    const mine = counts.filter((c) => c.entity_id === entity.id);
    const covered = coverage.filter((c) => c.entityId === entity.id && c.platform !== "unknown");
    const platforms = query.platform
      ? [query.platform]
      : [...new Set([...entity.platforms, ...mine.map((c) => c.platform), ...covered.map((c) => c.platform)])].sort();
    const rows = platforms.map((platform) => {
      const cov = covered.find((c) => c.platform === platform);
      const row = platformRow(
        platform,
        mine.find((c) => c.platform === platform),
        cov,
        deleted.filter((d) => d.entity_id === entity.id && d.platform === platform).map((d) => d.at),
      );
      gaps.push(...gapsOf(entity, row, cov));
      perPlatform.set(platform, [...(perPlatform.get(platform) ?? []), row]);
      return row;
    });
    if (rows.length === 0) gaps.push(`${entity.name} (${entity.id}): no platform is in scope: none is declared, stored or covered.`);
    const comprehensive = rows.length > 0 && rows.every((r) => r.coverage_proven && r.enrichment_complete && r.with_text === r.rows);
    return { entity_id: entity.id, name: entity.name, comprehensive, platforms: rows };
  });
  if (entities.length === 0) gaps.push("The scope holds no entities, so there is nothing to audit.");

  const platforms = [...perPlatform.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([platform, rows]) => aggregate(platform, rows));
  const totals = emptyCounts();
  for (const p of platforms) {
    for (const k of Object.keys(totals) as (keyof typeof totals)[]) totals[k] += p[k];
  }
  return {
    scope: { workspace_ids: workspaceIds, entity_ids: ids, platform: query.platform ?? null },
    comprehensive: entityReports.length > 0 && entityReports.every((e) => e.comprehensive),
    totals,
    platforms,
    entities: entityReports,
    gaps,
    checked_at: new Date().toISOString(),
  };
}
