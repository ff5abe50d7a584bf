-- The intelligence summary's quotes of a theme are the strongest units of its aspect and side in the
-- current window, read along (entity_id, aspect, sentiment). For a window holding a small share of an
-- entity's units (30 days of ten million originals), the walk passes thousands of units outside the
-- window before it has enough, and each one meant a read of the unit's row: 15.7 s for 20 themes at
-- 10,000,000 originals. With the unit's id in the index the walk reads the index alone, and only the
-- units it keeps are read from the table (src/insights/intelligence/sql.ts, quoteCandidates).
CREATE INDEX "opinion_units_entity_aspect_strength_idx" ON "opinion_units" ("entity_id", "aspect", "sentiment")
  INCLUDE ("seen_at", "sentiment_label", "kind", "id") WHERE "seen_at" IS NOT NULL;
DROP INDEX "opinion_units_entity_aspect_sentiment_idx";
