-- Deleting a project (src/deletion/projects.ts, project-run.ts; docs/api.md, "Delete a project").

-- 1. A project's deletion is a `deletion_records` row of kind `project`; each entity of the project is deleted
--    by an entity deletion (kind `entity`) that names it as its parent, so the project's progress is the sum of
--    its parts and an entity's own deletion (asked for before) joins it instead of running twice.
ALTER TABLE "deletion_records" DROP CONSTRAINT "deletion_records_kind_check";
ALTER TABLE "deletion_records" ADD CONSTRAINT "deletion_records_kind_check"
  CHECK ("kind" IN ('entity', 'knowledge_record', 'page', 'project'));
ALTER TABLE "deletion_records" ADD COLUMN "parent_id" UUID;
CREATE INDEX "deletion_records_parent_idx" ON "deletion_records"("parent_id");

-- 2. Nothing new is attached to a project whose deletion was requested: an entity created in it or moved into it,
--    an analysis, a knowledge record or a saved page naming it is refused (the API answers 404, as for a project
--    that is gone), so the deletion's last step finds everything that names the project. Rows that named it
--    before the request may still be changed (their project id is not being set anew).
CREATE FUNCTION "refuse_deleted_project"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW."project_id" IS NOT NULL
    AND (TG_OP = 'INSERT' OR NEW."project_id" IS DISTINCT FROM OLD."project_id")
    AND EXISTS (SELECT 1 FROM "deletion_records" d WHERE d."kind" = 'project' AND d."resource_id" = NEW."project_id")
  THEN
    RAISE EXCEPTION 'Project was not found.' USING ERRCODE = 'RP404', HINT = 'the project is being deleted';
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER "entities_refuse_deleted_project" BEFORE INSERT OR UPDATE OF "project_id" ON "entities"
  FOR EACH ROW EXECUTE FUNCTION "refuse_deleted_project"();
CREATE TRIGGER "analyses_refuse_deleted_project" BEFORE INSERT OR UPDATE OF "project_id" ON "analyses"
  FOR EACH ROW EXECUTE FUNCTION "refuse_deleted_project"();
CREATE TRIGGER "knowledge_insights_refuse_deleted_project" BEFORE INSERT OR UPDATE OF "project_id" ON "knowledge_insights"
  FOR EACH ROW EXECUTE FUNCTION "refuse_deleted_project"();
CREATE TRIGGER "pages_refuse_deleted_project" BEFORE INSERT OR UPDATE OF "project_id" ON "pages"
  FOR EACH ROW EXECUTE FUNCTION "refuse_deleted_project"();
