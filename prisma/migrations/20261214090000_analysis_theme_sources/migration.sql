-- Every source behind an analysis's insight (GET /agent/v1/analysis/{id}/insights/{n}/sources,
-- src/insights/analysis/theme-sources-read.ts), written with the result in one transaction
-- (src/insights/analysis/runner.ts) and deleted with the analysis (the foreign keys cascade).
--
-- `analysis_themes`: one row per insight of the result (`insight` is its number, 1-based, the `id` the
-- result gives it): the count its title states, how many of the analysed sample's sources it holds,
-- and, when the count was taken over every stored original in scope (the scope held more than the
-- sample, src/insights/analysis/scope-counts.ts), what that count matched: the topic's phrases, the
-- side of the theme ('any' for a topic overview), the question's focus, the scope's entities and
-- platforms at the time, and the moment after which stored originals are not the analysis's.
CREATE TABLE "analysis_themes" (
    "analysis_id" UUID NOT NULL,
    "insight" INTEGER NOT NULL,
    "aspect" TEXT NOT NULL,
    "side" TEXT NOT NULL,
    "focus" TEXT NOT NULL DEFAULT '',
    "phrases" TEXT[] NOT NULL DEFAULT '{}',
    "sources" INTEGER NOT NULL,
    "sample_sources" INTEGER NOT NULL,
    "entity_ids" UUID[],
    "platforms" TEXT[],
    "exclude_first_party" BOOLEAN NOT NULL DEFAULT false,
    "as_of" TIMESTAMPTZ(3) NOT NULL,
    CONSTRAINT "analysis_themes_pkey" PRIMARY KEY ("analysis_id", "insight"),
    CONSTRAINT "analysis_themes_side_check" CHECK ("side" IN ('complaint', 'praise', 'request', 'neutral', 'any')),
    CONSTRAINT "analysis_themes_analysis_id_fkey" FOREIGN KEY ("analysis_id") REFERENCES "analyses"("id") ON DELETE CASCADE
);

-- `analysis_theme_sources`: the analysed sample's sources of each insight, most representative first
-- (`rank`: the sources the insight quotes, in its order, then by their best statement's relevance and
-- strength), each with the span of its best statement for the theme and the moment of its original
-- (publication, else storage) for the newest-first order. Content ids only: never a word of an
-- original, so a deletion has nothing to rewrite here (a deleted original is listed as unavailable).
CREATE TABLE "analysis_theme_sources" (
    "analysis_id" UUID NOT NULL,
    "insight" INTEGER NOT NULL,
    "rank" INTEGER NOT NULL,
    "content_id" UUID NOT NULL,
    "seen_at" TIMESTAMPTZ(3) NOT NULL,
    "opinion_unit_id" UUID,
    "start_offset" INTEGER NOT NULL,
    "end_offset" INTEGER NOT NULL,
    CONSTRAINT "analysis_theme_sources_pkey" PRIMARY KEY ("analysis_id", "insight", "rank"),
    CONSTRAINT "analysis_theme_sources_theme_fkey" FOREIGN KEY ("analysis_id", "insight")
      REFERENCES "analysis_themes"("analysis_id", "insight") ON DELETE CASCADE
);
-- Newest first, and whether a source of the scope is one of the sample's (seen_at and content_id).
CREATE INDEX "analysis_theme_sources_seen_idx" ON "analysis_theme_sources" ("analysis_id", "insight", "seen_at", "content_id");

-- The rest of a theme's sources in a scope larger than the sample are read newest first from the scope's
-- units, per entity, by (seen_at, content_id) keyset: the units' seen index gets content_id as its last
-- key (so a page's sources come in index order, ties of one moment included) and the unit's terms in its
-- INCLUDE (a theme matches a unit by its aspect or one of its terms), so the walk reads the index alone.
-- Every reader of the old index (entity_id, seen_at) reads this one as before.
CREATE INDEX "opinion_units_entity_seen_source_idx" ON "opinion_units" ("entity_id", "seen_at", "content_id")
  INCLUDE ("aspect", "sentiment_label", "kind", "analyser_version", "churn", "compared_with", "terms")
  WHERE "seen_at" IS NOT NULL;
DROP INDEX "opinion_units_entity_seen_idx";
ALTER INDEX "opinion_units_entity_seen_source_idx" RENAME TO "opinion_units_entity_seen_idx";
