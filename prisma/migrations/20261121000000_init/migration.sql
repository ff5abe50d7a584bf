-- CreateTable
CREATE TABLE "users" (
    "id" UUID NOT NULL,
    "sub" TEXT NOT NULL,
    "email" TEXT,
    "raw_export_enabled" BOOLEAN NOT NULL DEFAULT false,
    "is_internal_agent" BOOLEAN NOT NULL DEFAULT false,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "users_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "users_sub_key" ON "users"("sub");

CREATE TABLE "workspaces" (
    "id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "personal" BOOLEAN NOT NULL DEFAULT false,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "workspaces_pkey" PRIMARY KEY ("id")
);

CREATE TABLE "workspace_members" (
    "workspace_id" UUID NOT NULL,
    "user_id" UUID NOT NULL,
    "role" TEXT NOT NULL DEFAULT 'member',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "workspace_members_pkey" PRIMARY KEY ("workspace_id","user_id")
);
CREATE INDEX "workspace_members_user_id_idx" ON "workspace_members"("user_id");

CREATE TABLE "projects" (
    "id" UUID NOT NULL,
    "workspace_id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "projects_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "projects_workspace_id_idx" ON "projects"("workspace_id");

CREATE TABLE "entities" (
    "id" UUID NOT NULL,
    "workspace_id" UUID NOT NULL,
    "project_id" UUID,
    "parent_entity_id" UUID,
    "kind" TEXT NOT NULL DEFAULT 'company',
    "name" TEXT NOT NULL,
    "url" TEXT NOT NULL DEFAULT '',
    "keywords" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "collection_targets" JSONB NOT NULL DEFAULT '{}',
    "platforms" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "entities_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "entities_workspace_id_idx" ON "entities"("workspace_id");
CREATE INDEX "entities_project_id_idx" ON "entities"("project_id");

CREATE TABLE "skills" (
    "id" UUID NOT NULL,
    "entity_id" UUID NOT NULL,
    "project_id" UUID,
    "objective_key" TEXT NOT NULL DEFAULT '',
    "title" TEXT NOT NULL,
    "question" TEXT NOT NULL DEFAULT '',
    "decision" TEXT NOT NULL DEFAULT '',
    "evidence" TEXT NOT NULL DEFAULT '',
    "workflow" JSONB NOT NULL DEFAULT '{}',
    "position" INTEGER NOT NULL DEFAULT 0,
    "revision" INTEGER NOT NULL DEFAULT 1,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "skills_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "skills_entity_id_idx" ON "skills"("entity_id");

CREATE TABLE "onboarding_requests" (
    "request_id" UUID NOT NULL,
    "user_id" UUID NOT NULL,
    "request_hash" TEXT NOT NULL,
    "response" JSONB NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "onboarding_requests_pkey" PRIMARY KEY ("request_id")
);

CREATE TABLE "content_store" (
    "id" UUID NOT NULL,
    "entity_id" UUID NOT NULL,
    "workspace_id" UUID NOT NULL,
    "parent_id" UUID,
    "kind" TEXT NOT NULL DEFAULT 'source',
    "platform" TEXT NOT NULL,
    "external_id" TEXT,
    "url" TEXT NOT NULL DEFAULT '',
    "title" TEXT NOT NULL DEFAULT '',
    "content" TEXT NOT NULL,
    "author" TEXT NOT NULL DEFAULT '',
    "published_at" TIMESTAMPTZ(3),
    "engagement" JSONB NOT NULL DEFAULT '{}',
    "metadata" JSONB,
    "collection_run_id" TEXT,
    "collection_scope" TEXT,
    "coverage_state" TEXT,
    "content_hash" TEXT NOT NULL,
    "dedup_key" TEXT NOT NULL,
    "embedding" REAL[],
    "embedding_model" TEXT,
    "enriched_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "search_vector" tsvector GENERATED ALWAYS AS (
        setweight(to_tsvector('english', left(coalesce("title", ''), 2000)), 'A') ||
        setweight(to_tsvector('english', left("content", 200000)), 'B')
    ) STORED,
    CONSTRAINT "content_store_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "content_store_entity_id_dedup_key_key" ON "content_store"("entity_id", "dedup_key");
CREATE INDEX "content_store_parent_id_idx" ON "content_store"("parent_id");
CREATE INDEX "content_store_entity_id_platform_idx" ON "content_store"("entity_id", "platform");
CREATE INDEX "content_store_workspace_id_idx" ON "content_store"("workspace_id");
CREATE INDEX "content_store_search_vector_idx" ON "content_store" USING GIN ("search_vector");

CREATE TABLE "coverage_records" (
    "id" UUID NOT NULL,
    "entity_id" UUID NOT NULL,
    "run_id" TEXT NOT NULL,
    "collector" TEXT NOT NULL,
    "collection_scope" TEXT NOT NULL DEFAULT 'unknown',
    "coverage_state" TEXT NOT NULL,
    "query" TEXT,
    "started_at" TEXT,
    "finished_at" TEXT,
    "totals" JSONB NOT NULL DEFAULT '{}',
    "notes" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "coverage_records_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "coverage_records_entity_id_run_id_collector_key" ON "coverage_records"("entity_id", "run_id", "collector");
CREATE INDEX "coverage_records_entity_id_collector_updated_at_idx" ON "coverage_records"("entity_id", "collector", "updated_at");

CREATE TABLE "coverage_targets" (
    "id" UUID NOT NULL,
    "coverage_record_id" UUID NOT NULL,
    "position" INTEGER NOT NULL,
    "target" TEXT NOT NULL DEFAULT '',
    "target_type" TEXT NOT NULL DEFAULT 'account',
    "role" TEXT NOT NULL DEFAULT 'unknown',
    "source_group" TEXT,
    "sender_type" TEXT,
    "status" TEXT NOT NULL DEFAULT 'unknown',
    "items_found" INTEGER NOT NULL DEFAULT 0,
    "items_stored" INTEGER NOT NULL DEFAULT 0,
    "cursor_start" TEXT,
    "cursor_end" TEXT,
    "reached_end" BOOLEAN,
    "error" TEXT,
    "metadata" JSONB,
    CONSTRAINT "coverage_targets_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "coverage_targets_coverage_record_id_idx" ON "coverage_targets"("coverage_record_id");

CREATE TABLE "collection_jobs" (
    "id" UUID NOT NULL,
    "user_id" UUID NOT NULL,
    "entity_id" UUID NOT NULL,
    "idempotency_key" TEXT NOT NULL,
    "request_hash" TEXT NOT NULL,
    "queue_job_id" TEXT NOT NULL,
    "route" TEXT NOT NULL DEFAULT 'collection',
    "status" TEXT NOT NULL DEFAULT 'queued',
    "objective" TEXT NOT NULL,
    "questions" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "depth" TEXT NOT NULL DEFAULT 'brief',
    "platforms" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "collection_only" BOOLEAN NOT NULL DEFAULT false,
    "progress" JSONB NOT NULL DEFAULT '{}',
    "error" TEXT,
    "analysis_id" UUID,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "started_at" TIMESTAMPTZ(3),
    "finished_at" TIMESTAMPTZ(3),
    CONSTRAINT "collection_jobs_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "collection_jobs_user_id_idempotency_key_key" ON "collection_jobs"("user_id", "idempotency_key");
CREATE INDEX "collection_jobs_entity_id_idx" ON "collection_jobs"("entity_id");
CREATE INDEX "collection_jobs_status_updated_at_idx" ON "collection_jobs"("status", "updated_at");

CREATE TABLE "analyses" (
    "id" UUID NOT NULL,
    "user_id" UUID NOT NULL,
    "workspace_id" UUID,
    "entity_id" UUID,
    "project_id" UUID,
    "request_id" TEXT,
    "question" TEXT NOT NULL,
    "search_mode" TEXT,
    "platforms" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "depth" TEXT NOT NULL DEFAULT 'brief',
    "provided_sources" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "status" TEXT NOT NULL DEFAULT 'queued',
    "result" JSONB,
    "error" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "finished_at" TIMESTAMPTZ(3),
    CONSTRAINT "analyses_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "analyses_user_id_request_id_key" ON "analyses"("user_id", "request_id");
CREATE INDEX "analyses_entity_id_idx" ON "analyses"("entity_id");

CREATE TABLE "analysis_events" (
    "id" BIGSERIAL NOT NULL,
    "analysis_id" UUID NOT NULL,
    "seq" INTEGER NOT NULL,
    "event" TEXT NOT NULL,
    "data" JSONB NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "analysis_events_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "analysis_events_analysis_id_seq_key" ON "analysis_events"("analysis_id", "seq");

CREATE TABLE "opinion_units" (
    "id" UUID NOT NULL,
    "content_id" UUID NOT NULL,
    "entity_id" UUID NOT NULL,
    "start_offset" INTEGER NOT NULL,
    "end_offset" INTEGER NOT NULL,
    "text" TEXT NOT NULL,
    "aspect" TEXT,
    "sentiment" REAL NOT NULL DEFAULT 0,
    "sentiment_label" TEXT NOT NULL DEFAULT 'neutral',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "opinion_units_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "opinion_units_content_id_start_offset_key" ON "opinion_units"("content_id", "start_offset");
CREATE INDEX "opinion_units_entity_id_idx" ON "opinion_units"("entity_id");

CREATE TABLE "entity_insights" (
    "id" UUID NOT NULL,
    "entity_id" UUID,
    "analysis_id" UUID,
    "title" TEXT NOT NULL,
    "summary" TEXT NOT NULL,
    "sentiment" TEXT NOT NULL DEFAULT 'neutral',
    "confidence" REAL NOT NULL DEFAULT 0,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "entity_insights_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "entity_insights_entity_id_idx" ON "entity_insights"("entity_id");
CREATE INDEX "entity_insights_analysis_id_idx" ON "entity_insights"("analysis_id");

CREATE TABLE "insight_evidence" (
    "id" UUID NOT NULL,
    "insight_id" UUID NOT NULL,
    "content_id" UUID NOT NULL,
    "opinion_unit_id" UUID,
    "quote" TEXT NOT NULL,
    "start_offset" INTEGER,
    "end_offset" INTEGER,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "insight_evidence_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "insight_evidence_insight_id_idx" ON "insight_evidence"("insight_id");
CREATE INDEX "insight_evidence_content_id_idx" ON "insight_evidence"("content_id");

CREATE TABLE "pages" (
    "id" UUID NOT NULL,
    "user_id" UUID NOT NULL,
    "project_id" UUID,
    "path" TEXT NOT NULL,
    "title" TEXT NOT NULL,
    "content" TEXT NOT NULL,
    "tags" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "version" INTEGER NOT NULL DEFAULT 1,
    "embedding" REAL[],
    "embedding_model" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "search_vector" tsvector GENERATED ALWAYS AS (
        setweight(to_tsvector('english', left("title", 2000)), 'A') ||
        setweight(to_tsvector('english', left("content", 200000)), 'B')
    ) STORED,
    CONSTRAINT "pages_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "pages_user_id_path_key" ON "pages"("user_id", "path");
CREATE INDEX "pages_user_id_project_id_idx" ON "pages"("user_id", "project_id");
CREATE INDEX "pages_search_vector_idx" ON "pages" USING GIN ("search_vector");

CREATE TABLE "knowledge" (
    "id" UUID NOT NULL,
    "entity_id" UUID NOT NULL,
    "workspace_id" UUID NOT NULL,
    "kind" TEXT NOT NULL,
    "platform" TEXT NOT NULL,
    "external_id" TEXT NOT NULL,
    "title" TEXT NOT NULL DEFAULT '',
    "content" TEXT NOT NULL,
    "metadata" JSONB,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "knowledge_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "knowledge_entity_id_kind_external_id_key" ON "knowledge"("entity_id", "kind", "external_id");

CREATE TABLE "api_keys" (
    "id" UUID NOT NULL,
    "user_id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "key_prefix" TEXT NOT NULL,
    "key_hash" TEXT NOT NULL,
    "scopes" TEXT[],
    "is_active" BOOLEAN NOT NULL DEFAULT true,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "revoked_at" TIMESTAMPTZ(3),
    "last_used_at" TIMESTAMPTZ(3),
    CONSTRAINT "api_keys_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "api_keys_key_hash_key" ON "api_keys"("key_hash");
CREATE INDEX "api_keys_user_id_idx" ON "api_keys"("user_id");

CREATE TABLE "api_key_usage" (
    "id" BIGSERIAL NOT NULL,
    "key_id" UUID NOT NULL,
    "at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "method" TEXT NOT NULL,
    "route" TEXT NOT NULL,
    "status_code" INTEGER NOT NULL,
    "scope_used" TEXT,
    CONSTRAINT "api_key_usage_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "api_key_usage_key_id_id_idx" ON "api_key_usage"("key_id", "id");

CREATE TABLE "note_syncs" (
    "id" UUID NOT NULL,
    "user_id" UUID NOT NULL,
    "entity_id" UUID NOT NULL,
    "request_id" TEXT NOT NULL,
    "request_hash" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'queued',
    "result" JSONB,
    "error" TEXT,
    "error_code" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "finished_at" TIMESTAMPTZ(3),
    CONSTRAINT "note_syncs_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "note_syncs_user_id_request_id_key" ON "note_syncs"("user_id", "request_id");

CREATE TABLE "quotes" (
    "id" UUID NOT NULL,
    "skill_id" UUID NOT NULL,
    "entity_id" UUID NOT NULL,
    "user_id" UUID NOT NULL,
    "source_mode" TEXT NOT NULL,
    "estimated_credits" INTEGER NOT NULL,
    "max_charge_credits" INTEGER NOT NULL,
    "scope_hash" TEXT NOT NULL,
    "breakdown" JSONB NOT NULL,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "quotes_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "quotes_skill_id_scope_hash_idx" ON "quotes"("skill_id", "scope_hash");

CREATE TABLE "workflow_runs" (
    "id" UUID NOT NULL,
    "skill_id" UUID NOT NULL,
    "entity_id" UUID NOT NULL,
    "workspace_id" UUID NOT NULL,
    "user_id" UUID NOT NULL,
    "quote_id" UUID,
    "idempotency_key" TEXT NOT NULL,
    "request_hash" TEXT NOT NULL,
    "scope_hash" TEXT NOT NULL,
    "source_mode" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'queued',
    "max_charge_credits" INTEGER NOT NULL,
    "charged_credits" INTEGER NOT NULL DEFAULT 0,
    "collection_job_id" UUID,
    "analysis_id" UUID,
    "error" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "finished_at" TIMESTAMPTZ(3),
    CONSTRAINT "workflow_runs_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "workflow_runs_user_id_idempotency_key_key" ON "workflow_runs"("user_id", "idempotency_key");
CREATE INDEX "workflow_runs_entity_id_idx" ON "workflow_runs"("entity_id");

CREATE TABLE "credit_ledger" (
    "id" BIGSERIAL NOT NULL,
    "workspace_id" UUID NOT NULL,
    "run_id" UUID,
    "kind" TEXT NOT NULL,
    "amount" INTEGER NOT NULL,
    "note" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "credit_ledger_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "credit_ledger_workspace_id_idx" ON "credit_ledger"("workspace_id");
CREATE INDEX "credit_ledger_run_id_idx" ON "credit_ledger"("run_id");

-- AddForeignKey
ALTER TABLE "workspace_members" ADD CONSTRAINT "workspace_members_workspace_id_fkey" FOREIGN KEY ("workspace_id") REFERENCES "workspaces"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "workspace_members" ADD CONSTRAINT "workspace_members_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "projects" ADD CONSTRAINT "projects_workspace_id_fkey" FOREIGN KEY ("workspace_id") REFERENCES "workspaces"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "entities" ADD CONSTRAINT "entities_workspace_id_fkey" FOREIGN KEY ("workspace_id") REFERENCES "workspaces"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "entities" ADD CONSTRAINT "entities_project_id_fkey" FOREIGN KEY ("project_id") REFERENCES "projects"("id") ON DELETE SET NULL ON UPDATE CASCADE;
ALTER TABLE "entities" ADD CONSTRAINT "entities_parent_entity_id_fkey" FOREIGN KEY ("parent_entity_id") REFERENCES "entities"("id") ON DELETE SET NULL ON UPDATE CASCADE;
ALTER TABLE "coverage_targets" ADD CONSTRAINT "coverage_targets_coverage_record_id_fkey" FOREIGN KEY ("coverage_record_id") REFERENCES "coverage_records"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "analysis_events" ADD CONSTRAINT "analysis_events_analysis_id_fkey" FOREIGN KEY ("analysis_id") REFERENCES "analyses"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "insight_evidence" ADD CONSTRAINT "insight_evidence_insight_id_fkey" FOREIGN KEY ("insight_id") REFERENCES "entity_insights"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "pages" ADD CONSTRAINT "pages_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "api_key_usage" ADD CONSTRAINT "api_key_usage_key_id_fkey" FOREIGN KEY ("key_id") REFERENCES "api_keys"("id") ON DELETE CASCADE ON UPDATE CASCADE;
