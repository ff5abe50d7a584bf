-- Knowledge records: versioned findings of one entity or one project, each revision citing
-- verbatim quotes of captured source snapshots. Revisions, their evidence and snapshots are
-- never rewritten; the record row holds only what listing needs (current revision, title, tags).

-- A scope's change counter: the next change event of the scope takes last_seq + 1 in the
-- writing transaction, and the row lock orders concurrent writers, so sequence numbers are
-- gap-free and committed in order.
CREATE TABLE "knowledge_scopes" (
    "scope_id" UUID NOT NULL,
    "last_seq" BIGINT NOT NULL DEFAULT 0,
    CONSTRAINT "knowledge_scopes_pkey" PRIMARY KEY ("scope_id")
);

CREATE TABLE "knowledge_insights" (
    "id" UUID NOT NULL,
    "workspace_id" UUID NOT NULL,
    "entity_id" UUID,
    "project_id" UUID,
    -- entity_id or project_id, whichever is set.
    "scope_id" UUID NOT NULL,
    "revision" INTEGER NOT NULL,
    "title" TEXT NOT NULL,
    "tags" TEXT[] NOT NULL DEFAULT ARRAY[]::TEXT[],
    -- Origin of the current revision: agent or generated.
    "origin" TEXT NOT NULL,
    -- True once an agent wrote a revision: generated refreshes then leave the record alone.
    "agent_revised" BOOLEAN NOT NULL DEFAULT false,
    -- For records an analysis publishes: the identity of the finding across re-runs.
    "generator_key" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "knowledge_insights_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "knowledge_insights_one_scope_check" CHECK (("entity_id" IS NULL) <> ("project_id" IS NULL)),
    CONSTRAINT "knowledge_insights_scope_check" CHECK ("scope_id" = COALESCE("entity_id", "project_id")),
    CONSTRAINT "knowledge_insights_origin_check" CHECK ("origin" IN ('agent', 'generated'))
);
CREATE INDEX "knowledge_insights_scope_updated_idx" ON "knowledge_insights"("scope_id", "updated_at", "id");
CREATE INDEX "knowledge_insights_scope_created_idx" ON "knowledge_insights"("scope_id", "created_at", "id");
CREATE INDEX "knowledge_insights_tags_idx" ON "knowledge_insights" USING GIN ("tags");
CREATE UNIQUE INDEX "knowledge_insights_generator_key" ON "knowledge_insights"("scope_id", "generator_key") WHERE "generator_key" IS NOT NULL;
ALTER TABLE "knowledge_insights" ADD CONSTRAINT "knowledge_insights_workspace_id_fkey" FOREIGN KEY ("workspace_id") REFERENCES "workspaces"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "knowledge_insights" ADD CONSTRAINT "knowledge_insights_entity_id_fkey" FOREIGN KEY ("entity_id") REFERENCES "entities"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "knowledge_insights" ADD CONSTRAINT "knowledge_insights_project_id_fkey" FOREIGN KEY ("project_id") REFERENCES "projects"("id") ON DELETE CASCADE ON UPDATE CASCADE;

CREATE TABLE "knowledge_insight_revisions" (
    "insight_id" UUID NOT NULL,
    "revision" INTEGER NOT NULL,
    "title" TEXT NOT NULL,
    "summary" TEXT NOT NULL,
    "reasoning" TEXT NOT NULL DEFAULT '',
    "limitations" TEXT[] NOT NULL DEFAULT ARRAY[]::TEXT[],
    "tags" TEXT[] NOT NULL DEFAULT ARRAY[]::TEXT[],
    "origin" TEXT NOT NULL,
    -- The authenticated writer (for generated revisions, the user whose analysis wrote it).
    "actor_id" UUID NOT NULL,
    -- Self-reported by the client; never used for access.
    "client_label" TEXT,
    "review_state" TEXT NOT NULL DEFAULT 'unreviewed',
    "analysis_id" UUID,
    "change_seq" BIGINT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "knowledge_insight_revisions_pkey" PRIMARY KEY ("insight_id", "revision"),
    CONSTRAINT "knowledge_insight_revisions_origin_check" CHECK ("origin" IN ('agent', 'generated'))
);
ALTER TABLE "knowledge_insight_revisions" ADD CONSTRAINT "knowledge_insight_revisions_insight_id_fkey" FOREIGN KEY ("insight_id") REFERENCES "knowledge_insights"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- An immutable snapshot of one original's text, captured when a revision first cites it. An
-- unchanged original keeps its snapshot (one per original and text hash). When the original is
-- deleted, content_id becomes null and the trigger below removes the captured text: the
-- snapshot stays as a tombstone, so old citations read back as unavailable evidence.
CREATE TABLE "knowledge_source_revisions" (
    "id" UUID NOT NULL,
    "content_id" UUID,
    "original_id" UUID NOT NULL,
    "entity_id" UUID NOT NULL,
    "workspace_id" UUID NOT NULL,
    -- original: quotable source text; interpretation: citable only as context.
    "text_kind" TEXT NOT NULL,
    "row_kind" TEXT NOT NULL,
    "platform" TEXT NOT NULL,
    "url" TEXT NOT NULL DEFAULT '',
    "title" TEXT NOT NULL DEFAULT '',
    "author" TEXT NOT NULL DEFAULT '',
    "published_at" TIMESTAMPTZ(3),
    "text" TEXT,
    "text_hash" TEXT NOT NULL,
    "text_length" INTEGER NOT NULL,
    "captured_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "removed_at" TIMESTAMPTZ(3),
    CONSTRAINT "knowledge_source_revisions_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "knowledge_source_revisions_text_kind_check" CHECK ("text_kind" IN ('original', 'interpretation'))
);
CREATE UNIQUE INDEX "knowledge_source_revisions_original_hash_key" ON "knowledge_source_revisions"("original_id", "text_hash");
CREATE INDEX "knowledge_source_revisions_content_id_idx" ON "knowledge_source_revisions"("content_id");
ALTER TABLE "knowledge_source_revisions" ADD CONSTRAINT "knowledge_source_revisions_content_id_fkey" FOREIGN KEY ("content_id") REFERENCES "content_store"("id") ON DELETE SET NULL ON UPDATE CASCADE;

CREATE FUNCTION "knowledge_source_revisions_forget"() RETURNS trigger AS $$
BEGIN
  IF NEW."content_id" IS NULL AND OLD."content_id" IS NOT NULL THEN
    NEW."text" := NULL;
    NEW."title" := '';
    NEW."author" := '';
    NEW."url" := '';
    NEW."removed_at" := CURRENT_TIMESTAMP;
  END IF;
  RETURN NEW;
END;
$$ LANGUAGE plpgsql;
CREATE TRIGGER "knowledge_source_revisions_forget" BEFORE UPDATE OF "content_id" ON "knowledge_source_revisions"
  FOR EACH ROW EXECUTE FUNCTION "knowledge_source_revisions_forget"();

CREATE TABLE "knowledge_revision_evidence" (
    "insight_id" UUID NOT NULL,
    "revision" INTEGER NOT NULL,
    "position" INTEGER NOT NULL,
    "source_revision_id" UUID NOT NULL,
    "original_id" UUID NOT NULL,
    "quote" TEXT NOT NULL,
    "relation" TEXT NOT NULL,
    -- Code-point offsets of the quote in the snapshot's text.
    "start_offset" INTEGER NOT NULL,
    "end_offset" INTEGER NOT NULL,
    CONSTRAINT "knowledge_revision_evidence_pkey" PRIMARY KEY ("insight_id", "revision", "position"),
    CONSTRAINT "knowledge_revision_evidence_relation_check" CHECK ("relation" IN ('supports', 'contradicts', 'context'))
);
CREATE INDEX "knowledge_revision_evidence_source_idx" ON "knowledge_revision_evidence"("source_revision_id");
ALTER TABLE "knowledge_revision_evidence" ADD CONSTRAINT "knowledge_revision_evidence_revision_fkey" FOREIGN KEY ("insight_id", "revision") REFERENCES "knowledge_insight_revisions"("insight_id", "revision") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "knowledge_revision_evidence" ADD CONSTRAINT "knowledge_revision_evidence_source_fkey" FOREIGN KEY ("source_revision_id") REFERENCES "knowledge_source_revisions"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- The revision feed: one event per committed revision, numbered per scope.
CREATE TABLE "knowledge_changes" (
    "scope_id" UUID NOT NULL,
    "seq" BIGINT NOT NULL,
    "insight_id" UUID NOT NULL,
    "revision" INTEGER NOT NULL,
    "kind" TEXT NOT NULL,
    "origin" TEXT NOT NULL,
    "actor_id" UUID NOT NULL,
    "title" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "knowledge_changes_pkey" PRIMARY KEY ("scope_id", "seq")
);
ALTER TABLE "knowledge_changes" ADD CONSTRAINT "knowledge_changes_insight_id_fkey" FOREIGN KEY ("insight_id") REFERENCES "knowledge_insights"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Idempotent writes: the answer to each (caller, request_id), with a hash of the request.
CREATE TABLE "knowledge_write_requests" (
    "user_id" UUID NOT NULL,
    "request_id" TEXT NOT NULL,
    "request_hash" TEXT NOT NULL,
    "insight_id" UUID NOT NULL,
    "status" INTEGER NOT NULL,
    "receipt" JSONB NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "knowledge_write_requests_pkey" PRIMARY KEY ("user_id", "request_id")
);
ALTER TABLE "knowledge_write_requests" ADD CONSTRAINT "knowledge_write_requests_insight_id_fkey" FOREIGN KEY ("insight_id") REFERENCES "knowledge_insights"("id") ON DELETE CASCADE ON UPDATE CASCADE;
