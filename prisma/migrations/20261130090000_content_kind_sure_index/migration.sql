-- A focused analysis ("Which features do users request most?") first reads an entity's sources of the
-- asked feedback kind, most surely so first (src/insights/analysis/sample.ts). Without an index in that
-- order it sorted every such source of the scope: linear in the entity. Only enriched rows carry a kind,
-- so ingest does not write this index.
CREATE INDEX "content_store_entity_kind_sure_idx" ON "content_store"
  ("entity_id", "feedback_kind", "feedback_kind_confidence" DESC NULLS LAST, "created_at" DESC, "id" DESC)
  WHERE "feedback_kind" IS NOT NULL;
