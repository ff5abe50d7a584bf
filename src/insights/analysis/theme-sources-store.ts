import type { Db, DbTx } from "../../platform/db.js";
import { type AnalysisScope, entitiesInScope } from "./scope.js";
import type { ScopeSnapshot, ThemeSourcesOutput } from "./theme-sources.js";

/**
 * The reads and writes of each insight's sources around the engine (theme-sources.ts says what they
 * are): the scope as it is counted (the engine takes it just before the counts over the scope), and the
 * rows written with the result in the runner's transaction (`analysis_themes`, `analysis_theme_sources`,
 * migration 20261214090000), replaced whole when a job is delivered again.
 */

/**
 * The scope's entities and platforms and the database's clock, read just before the counts over the
 * scope: originals stored after this moment are not listed as the analysis's (paging stays stable under
 * ingest). A scope naming no entity is its workspace's entities at this moment.
 */
export async function scopeSnapshot(db: Db, scope: AnalysisScope, sources: number): Promise<ScopeSnapshot> {
  const [clock] = await db.$queryRaw<{ at: Date }[]>`SELECT clock_timestamp() AS at`;
  return {
    asOf: clock?.at ?? new Date(),
    entityIds: scope.entityIds ?? (await entitiesInScope(db, scope)),
    platforms: scope.platforms,
    excludeFirstParty: scope.excludeFirstParty,
    sources,
  };
}

/** Writes the insights' sources of one analysis (in the result's transaction), replacing any written before. */
export async function storeThemeSources(tx: DbTx, analysisId: string, output: ThemeSourcesOutput | null): Promise<void> {
  await tx.$executeRaw`DELETE FROM analysis_themes WHERE analysis_id = ${analysisId}::uuid`;
  if (!output || output.themes.length === 0) return;
  const { scope } = output;
  const themes = output.themes.map((t) => ({
    insight: t.insight,
    aspect: t.aspect,
    side: t.side,
    focus: t.focus,
    phrases: t.phrases,
    sources: t.sources,
    sample_sources: t.members.length,
  }));
  await tx.$executeRaw`
    INSERT INTO analysis_themes (analysis_id, insight, aspect, side, focus, phrases, sources, sample_sources, entity_ids, platforms,
      exclude_first_party, as_of, scope_sources)
    SELECT ${analysisId}::uuid, t.insight, t.aspect, t.side, t.focus, ARRAY(SELECT jsonb_array_elements_text(t.phrases)), t.sources,
      t.sample_sources, ${scope?.entityIds ?? null}::uuid[], ${scope?.platforms ?? null}::text[], ${scope?.excludeFirstParty ?? false},
      coalesce(${scope?.asOf ?? null}::timestamptz, now()), ${scope?.sources ?? null}::int
    FROM jsonb_to_recordset(${JSON.stringify(themes)}::jsonb)
      AS t(insight int, aspect text, side text, focus text, phrases jsonb, sources int, sample_sources int)`;
  const members = output.themes.flatMap((t) => t.members.map((m, i) => ({ insight: t.insight, rank: i + 1, ...m })));
  if (members.length === 0) return;
  // The moment of each original as its units carry it (opinion_units.seen_at): publication, else storage.
  await tx.$executeRaw`
    INSERT INTO analysis_theme_sources (analysis_id, insight, rank, content_id, seen_at, opinion_unit_id, start_offset, end_offset)
    SELECT ${analysisId}::uuid, m.insight, m.rank, m.content_id, coalesce(c.published_at, c.created_at, now()), m.unit_id,
      m.start_offset, m.end_offset
    FROM unnest(${members.map((m) => m.insight)}::int[], ${members.map((m) => m.rank)}::int[], ${members.map((m) => m.contentId)}::uuid[],
        ${members.map((m) => m.unitId)}::uuid[], ${members.map((m) => m.start)}::int[], ${members.map((m) => m.end)}::int[])
      AS m(insight, rank, content_id, unit_id, start_offset, end_offset)
    LEFT JOIN content_store c ON c.id = m.content_id`;
}
