-- An analysis asking why users leave or how the product compares looks for the scope's newest units that
-- carry churn or name another product (src/insights/analysis/sample.ts), along opinion_units_entity_seen_idx.
-- Those two columns were not in the index, so each of the 200,000 units of the walk meant a read of its row:
-- 3.5 s at 10,000,000 originals. With them included the walk reads the index alone, as for the other focuses.
CREATE INDEX "opinion_units_entity_seen_signals_idx" ON "opinion_units" ("entity_id", "seen_at")
  INCLUDE ("aspect", "sentiment_label", "kind", "content_id", "analyser_version", "churn", "compared_with")
  WHERE "seen_at" IS NOT NULL;
DROP INDEX "opinion_units_entity_seen_idx";
ALTER INDEX "opinion_units_entity_seen_signals_idx" RENAME TO "opinion_units_entity_seen_idx";
