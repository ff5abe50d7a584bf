-- A deep analysis counts each reported theme's sources over every stored original in its scope
-- (src/analysis/scope-counts.ts): one pass that joins the scope's evidence originals with their opinion
-- units by source. These two indexes let both sides of that join be read index-only, already in source
-- order, without reading the originals' rows (their text and embeddings) or the units' text.
--
-- 1. The evidence originals of an entity, by id, with the other scope columns (workspace, platform).
--    The predicate is isEvidenceRow's rule (src/analysis/scope.ts: not a summary, not a meeting note's
--    own row), so the scope's evidence condition is implied by the index and not re-checked.
CREATE INDEX "content_store_evidence_scope_idx" ON "content_store" ("entity_id", "id") INCLUDE ("workspace_id", "platform")
  WHERE "kind" <> 'summary' AND coalesce("metadata"->>'kind', '') <> 'meeting_note';

-- 2. The units of each original with the columns the count reads: what they are about (aspect, terms),
--    their side (kind, sentiment label) and the focus columns (compared_with, churn).
CREATE INDEX "opinion_units_content_sides_idx" ON "opinion_units" ("content_id")
  INCLUDE ("aspect", "terms", "kind", "sentiment_label", "compared_with", "churn");
