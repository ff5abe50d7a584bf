-- A skill's public id is the id its caller chose ("launch-review"), unique within its entity and stable
-- across edits. Skills stored before keep the uuid callers already hold as their id. Runs and routines
-- keep the id of the skill they ran for, so they read the same after the skill is removed.
ALTER TABLE "skills" ADD COLUMN "key" TEXT;
UPDATE "skills" SET "key" = "id"::text;
ALTER TABLE "skills" ALTER COLUMN "key" SET NOT NULL;
CREATE UNIQUE INDEX "skills_entity_id_key_key" ON "skills"("entity_id", "key");

ALTER TABLE "workflow_runs" ADD COLUMN "skill_key" TEXT;
UPDATE "workflow_runs" SET "skill_key" = "skill_id"::text;
ALTER TABLE "workflow_runs" ALTER COLUMN "skill_key" SET NOT NULL;

ALTER TABLE "skill_routines" ADD COLUMN "skill_key" TEXT;
UPDATE "skill_routines" SET "skill_key" = "skill_id"::text;
ALTER TABLE "skill_routines" ALTER COLUMN "skill_key" SET NOT NULL;
CREATE INDEX "skill_routines_entity_id_skill_key_idx" ON "skill_routines"("entity_id", "skill_key");
