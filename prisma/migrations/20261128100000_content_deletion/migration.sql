-- Forgetting on purpose (src/deletion; docs/api.md, "Deleting stored originals"): deleting a stored
-- original with its comments, and forgetting an author on a platform within a workspace.

-- 1. One tombstone per deleted original (a source, a comment, an utterance): what it was and why and
--    when it went, never its text, title, author, url or external id. A second delete of the same id
--    finds it here (204), citations of it read back as unavailable with this reason and time, and the
--    completeness audit counts it as deleted, not stored.
CREATE TABLE "content_deletions" (
    "content_id" UUID NOT NULL,
    "workspace_id" UUID NOT NULL,
    "entity_id" UUID NOT NULL,
    -- The original whose deletion removed this one: itself, or the source a comment answered.
    "root_id" UUID NOT NULL,
    "kind" TEXT NOT NULL,
    "platform" TEXT NOT NULL,
    "reason" TEXT NOT NULL,
    "erasure_id" UUID,
    "deleted_by" UUID,
    "deleted_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "content_deletions_pkey" PRIMARY KEY ("content_id"),
    CONSTRAINT "content_deletions_reason_check" CHECK ("reason" IN ('deleted', 'author_erased'))
);
CREATE INDEX "content_deletions_entity_platform_idx" ON "content_deletions"("entity_id", "platform", "deleted_at");
CREATE INDEX "content_deletions_workspace_idx" ON "content_deletions"("workspace_id");
ALTER TABLE "content_deletions" ADD CONSTRAINT "content_deletions_workspace_id_fkey" FOREIGN KEY ("workspace_id") REFERENCES "workspaces"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "content_deletions" ADD CONSTRAINT "content_deletions_entity_id_fkey" FOREIGN KEY ("entity_id") REFERENCES "entities"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- 2. An author forgotten on one platform of one workspace. Only an HMAC-SHA256 of the normalised handle
--    is kept (keyed by SECRETS_KEY; `hash_key_id` names the key, so a changed key is noticed instead of
--    letting the author back in). Ingests check it; the counters say what the erasure removed so far.
CREATE TABLE "author_erasures" (
    "id" UUID NOT NULL,
    "workspace_id" UUID NOT NULL,
    "platform" TEXT NOT NULL,
    "author_hash" TEXT NOT NULL,
    "hash_key_id" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'running',
    "requested_by" UUID,
    "originals_matched" INTEGER NOT NULL DEFAULT 0,
    "rows_deleted" INTEGER NOT NULL DEFAULT 0,
    "opinion_units_deleted" INTEGER NOT NULL DEFAULT 0,
    "analyses_updated" INTEGER NOT NULL DEFAULT 0,
    "knowledge_citations_cleared" INTEGER NOT NULL DEFAULT 0,
    "batches" INTEGER NOT NULL DEFAULT 0,
    "error" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "finished_at" TIMESTAMPTZ(3),

    CONSTRAINT "author_erasures_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "author_erasures_status_check" CHECK ("status" IN ('running', 'completed', 'failed'))
);
CREATE UNIQUE INDEX "author_erasures_author_key" ON "author_erasures"("workspace_id", "platform", "author_hash");
CREATE INDEX "author_erasures_workspace_created_idx" ON "author_erasures"("workspace_id", "created_at", "id");
ALTER TABLE "author_erasures" ADD CONSTRAINT "author_erasures_workspace_id_fkey" FOREIGN KEY ("workspace_id") REFERENCES "workspaces"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- What every store path asks before writing (src/deletion/authors.ts), in one round trip: the
-- workspace's erasures on these platforms, read after taking the workspace's erasure lock shared (the
-- recording of an erasure takes it exclusively). A volatile function's query takes a new snapshot, so
-- it sees an erasure that committed while the lock was awaited.
CREATE FUNCTION "author_erasures_for"(ws UUID, platforms TEXT[])
RETURNS TABLE ("platform" TEXT, "author_hash" TEXT, "hash_key_id" TEXT) LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  PERFORM pg_advisory_xact_lock_shared(hashtextextended('author-erasures:' || ws::text, 0));
  RETURN QUERY SELECT e.platform, e.author_hash, e.hash_key_id FROM author_erasures e
    WHERE e.workspace_id = ws AND e.platform = ANY(platforms);
END $$;

-- The originals an erasure still has to delete (ids only): found once, when it is recorded, by the
-- handle the request carried; drained in batches, each batch one transaction.
CREATE TABLE "author_erasure_items" (
    "erasure_id" UUID NOT NULL,
    "content_id" UUID NOT NULL,

    CONSTRAINT "author_erasure_items_pkey" PRIMARY KEY ("erasure_id", "content_id")
);
ALTER TABLE "author_erasure_items" ADD CONSTRAINT "author_erasure_items_erasure_id_fkey" FOREIGN KEY ("erasure_id") REFERENCES "author_erasures"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- 3. Analyses that quoted an original are found through their stored evidence events.
CREATE INDEX "analysis_events_evidence_content_idx" ON "analysis_events"((("data"->>'content_id'))) WHERE "event" = 'evidence';

-- 4. A snapshot whose original was deleted also loses the hash of the deleted text (a hash still
--    confirms a guess of the words); the tombstone's value stays unique per snapshot.
CREATE OR REPLACE FUNCTION "knowledge_source_revisions_forget"() RETURNS trigger AS $$
BEGIN
  IF NEW."content_id" IS NULL AND OLD."content_id" IS NOT NULL THEN
    NEW."text" := NULL;
    NEW."title" := '';
    NEW."author" := '';
    NEW."url" := '';
    NEW."text_hash" := 'removed:' || NEW."id"::text;
    NEW."removed_at" := CURRENT_TIMESTAMP;
  END IF;
  RETURN NEW;
END;
$$ LANGUAGE plpgsql;
