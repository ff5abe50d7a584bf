-- Deleting an entity, a knowledge record or a saved page on purpose (src/deletion; docs/api.md,
-- "Deleting stored originals").

-- 1. What such a deletion leaves: which resource of which kind went, in which workspace (a page: whose),
--    who asked and when; never a name or any text. A second delete finds it here (204, after the same
--    role check), and an entity's deletion, a resumable job, keeps its status and progress on it.
CREATE TABLE "deletion_records" (
    "id" UUID NOT NULL,
    "kind" TEXT NOT NULL,
    "resource_id" UUID NOT NULL,
    "workspace_id" UUID,
    -- A saved page's owner (pages are per account).
    "owner_id" UUID,
    -- A knowledge record's scope: its entity or project id.
    "scope_id" UUID,
    "status" TEXT NOT NULL DEFAULT 'completed',
    "requested_by" UUID,
    "originals_matched" INTEGER NOT NULL DEFAULT 0,
    "rows_deleted" INTEGER NOT NULL DEFAULT 0,
    "opinion_units_deleted" INTEGER NOT NULL DEFAULT 0,
    "analyses_updated" INTEGER NOT NULL DEFAULT 0,
    "knowledge_citations_cleared" INTEGER NOT NULL DEFAULT 0,
    "batches" INTEGER NOT NULL DEFAULT 0,
    "jobs_cancelled" INTEGER NOT NULL DEFAULT 0,
    "removed" JSONB NOT NULL DEFAULT '{}',
    "error" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "finished_at" TIMESTAMPTZ(3),

    CONSTRAINT "deletion_records_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "deletion_records_kind_check" CHECK ("kind" IN ('entity', 'knowledge_record', 'page')),
    CONSTRAINT "deletion_records_status_check" CHECK ("status" IN ('running', 'completed', 'failed'))
);
CREATE UNIQUE INDEX "deletion_records_resource_key" ON "deletion_records"("kind", "resource_id");
CREATE INDEX "deletion_records_workspace_idx" ON "deletion_records"("workspace_id", "created_at", "id");
ALTER TABLE "deletion_records" ADD CONSTRAINT "deletion_records_workspace_id_fkey" FOREIGN KEY ("workspace_id") REFERENCES "workspaces"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "deletion_records" ADD CONSTRAINT "deletion_records_owner_id_fkey" FOREIGN KEY ("owner_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- 2. No original is stored for an entity whose deletion was requested: its cascade drains the entity's
--    originals in batches, and an ingest that resolved the entity before the request must not add more
--    behind it. One check per insert statement (the statement's new rows against this small table).
--    Store paths take the workspace's erasure lock shared in their transaction; the deletion's last step
--    takes it exclusively, so an insert that ran before the request committed is seen by that step.
CREATE FUNCTION "content_store_refuse_deleted_entity"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF EXISTS (
    SELECT 1 FROM "new_rows" n JOIN "deletion_records" d ON d."kind" = 'entity' AND d."resource_id" = n."entity_id"
  ) THEN
    RAISE EXCEPTION 'Entity was not found.' USING ERRCODE = 'RE404', HINT = 'the entity is being deleted';
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER "content_store_refuse_deleted_entity" AFTER INSERT ON "content_store"
  REFERENCING NEW TABLE AS "new_rows" FOR EACH STATEMENT EXECUTE FUNCTION "content_store_refuse_deleted_entity"();

-- 3. A knowledge record's change feed outlives the record: deleting one appends a `deleted` event and
--    keeps the scope's earlier events (their titles cleared), so the feed stays gap-free and a reader
--    learns of the deletion. The feed goes with its scope instead (an entity or project deleted).
ALTER TABLE "knowledge_changes" DROP CONSTRAINT "knowledge_changes_insight_id_fkey";
CREATE INDEX "knowledge_changes_insight_idx" ON "knowledge_changes"("insight_id");
CREATE FUNCTION "knowledge_scope_forget"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM "knowledge_changes" WHERE "scope_id" = OLD."id";
  DELETE FROM "knowledge_scopes" WHERE "scope_id" = OLD."id";
  RETURN NULL;
END $$;
CREATE TRIGGER "entities_knowledge_scope_forget" AFTER DELETE ON "entities"
  FOR EACH ROW EXECUTE FUNCTION "knowledge_scope_forget"();
CREATE TRIGGER "projects_knowledge_scope_forget" AFTER DELETE ON "projects"
  FOR EACH ROW EXECUTE FUNCTION "knowledge_scope_forget"();
