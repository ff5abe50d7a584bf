-- The rest of a theme's sources in a scope larger than the analysed sample (src/insights/analysis/
-- theme-sources-scope.ts) are read newest first along the units' seen index, which finds a page's sources
-- quickly when many of the scope's units name the theme. When few do (a topic the stored units rarely
-- name), that walk would read most of an entity's units to fill a page; those are found by name instead.
--
-- A unit's names are its aspect and its terms (the names the scope's counts take, opinion_source_rollups),
-- each prefixed with the unit's entity, so one lookup is one entity's units of one name, whatever other
-- workspaces say. A GIN index over them (only units of evidence originals, as every scope read) answers
-- "this entity's units naming one of these" with the matching units alone.
CREATE FUNCTION "opinion_unit_names"(entity_id UUID, aspect TEXT, terms TEXT[]) RETURNS TEXT[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT coalesce(array_agg(DISTINCT entity_id::text || ':' || n), '{}'::text[])
  FROM unnest(array_prepend(aspect, terms)) AS n WHERE n IS NOT NULL
$$;

CREATE INDEX "opinion_units_names_idx" ON "opinion_units" USING gin ("opinion_unit_names"("entity_id", "aspect", "terms"))
  WHERE "seen_at" IS NOT NULL;

-- How many stored originals the scope held when the theme was counted: with the theme's names' count in
-- the roll-ups, it tells the reader which way finds the rest of the scope's sources sooner.
ALTER TABLE "analysis_themes" ADD COLUMN "scope_sources" INTEGER;
