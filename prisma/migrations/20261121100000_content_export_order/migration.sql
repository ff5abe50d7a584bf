-- Raw export pages content_store in (created_at, id) order, per workspace or per entity.
CREATE INDEX "content_store_workspace_id_created_at_id_idx" ON "content_store"("workspace_id", "created_at", "id");
CREATE INDEX "content_store_entity_id_created_at_id_idx" ON "content_store"("entity_id", "created_at", "id");
