-- Evidence capture runs (POST /api/sweeps/run): enrichment (embeddings, opinion units) of an
-- entity's originals that were stored up to the run's creation and not yet enriched. One run per
-- caller and idempotency key; the worker resumes from the cursor after a retry and adds to the
-- statistics, so a retried run counts every original once.
CREATE TABLE "sweep_runs" (
    "id" UUID NOT NULL,
    "user_id" UUID NOT NULL,
    "entity_id" UUID NOT NULL,
    "idempotency_key" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'queued',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    -- Originals stored up to this moment are the run's.
    "cutoff" TIMESTAMPTZ(3) NOT NULL,
    "cursor_created_at" TIMESTAMPTZ(3),
    "cursor_id" UUID,
    "statistics" JSONB NOT NULL DEFAULT '{}',
    "error" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "started_at" TIMESTAMPTZ(3),
    "finished_at" TIMESTAMPTZ(3),
    CONSTRAINT "sweep_runs_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "sweep_runs_status_check" CHECK ("status" IN ('queued', 'running', 'completed', 'failed'))
);
CREATE UNIQUE INDEX "sweep_runs_user_id_idempotency_key_key" ON "sweep_runs"("user_id", "idempotency_key");
CREATE INDEX "sweep_runs_entity_id_idx" ON "sweep_runs"("entity_id");
ALTER TABLE "sweep_runs" ADD CONSTRAINT "sweep_runs_entity_id_fkey" FOREIGN KEY ("entity_id") REFERENCES "entities"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "sweep_runs" ADD CONSTRAINT "sweep_runs_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;
