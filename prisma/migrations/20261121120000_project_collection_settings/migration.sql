-- Onboarding settings of a research project: who collects (an agent on the user's
-- machine or this server) and which agent tools the user intends to connect.
ALTER TABLE "projects" ADD COLUMN "collection_mode" TEXT NOT NULL DEFAULT 'server';
ALTER TABLE "projects" ADD COLUMN "source_intent" TEXT[] NOT NULL DEFAULT ARRAY[]::TEXT[];
ALTER TABLE "projects" ADD CONSTRAINT "projects_collection_mode_check" CHECK ("collection_mode" IN ('agent', 'server'));
