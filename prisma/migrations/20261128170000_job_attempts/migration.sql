-- Retries are new attempts (docs/api.md, "Job lifecycle and cancellation"): a terminal row (completed,
-- failed, cancelled, partial) never changes again. A retry of a failed meeting-note sync or evidence
-- capture run under the same key, and an operator's requeue-job of a failed collection job, make a new
-- row: `attempt` n + 1 of the same (caller, key), `retry_of` the failed row. The key resolves to its
-- newest attempt; the unique index over the attempt lets exactly one concurrent retry create it.
-- Existing rows are attempt 1.

ALTER TABLE "collection_jobs" ADD COLUMN "attempt" INTEGER NOT NULL DEFAULT 1;
ALTER TABLE "collection_jobs" ADD COLUMN "retry_of" UUID;
ALTER TABLE "collection_jobs" ADD CONSTRAINT "collection_jobs_attempt_check" CHECK ("attempt" >= 1);
ALTER TABLE "collection_jobs" ADD CONSTRAINT "collection_jobs_retry_of_fkey" FOREIGN KEY ("retry_of") REFERENCES "collection_jobs"("id") ON DELETE SET NULL ON UPDATE CASCADE;
DROP INDEX "collection_jobs_user_id_idempotency_key_key";
CREATE UNIQUE INDEX "collection_jobs_user_id_idempotency_key_attempt_key" ON "collection_jobs"("user_id", "idempotency_key", "attempt");
CREATE INDEX "collection_jobs_retry_of_idx" ON "collection_jobs"("retry_of");

ALTER TABLE "note_syncs" ADD COLUMN "attempt" INTEGER NOT NULL DEFAULT 1;
ALTER TABLE "note_syncs" ADD COLUMN "retry_of" UUID;
ALTER TABLE "note_syncs" ADD CONSTRAINT "note_syncs_attempt_check" CHECK ("attempt" >= 1);
ALTER TABLE "note_syncs" ADD CONSTRAINT "note_syncs_retry_of_fkey" FOREIGN KEY ("retry_of") REFERENCES "note_syncs"("id") ON DELETE SET NULL ON UPDATE CASCADE;
DROP INDEX "note_syncs_user_id_request_id_key";
CREATE UNIQUE INDEX "note_syncs_user_id_request_id_attempt_key" ON "note_syncs"("user_id", "request_id", "attempt");
CREATE INDEX "note_syncs_retry_of_idx" ON "note_syncs"("retry_of");

ALTER TABLE "sweep_runs" ADD COLUMN "attempt" INTEGER NOT NULL DEFAULT 1;
ALTER TABLE "sweep_runs" ADD COLUMN "retry_of" UUID;
ALTER TABLE "sweep_runs" ADD CONSTRAINT "sweep_runs_attempt_check" CHECK ("attempt" >= 1);
ALTER TABLE "sweep_runs" ADD CONSTRAINT "sweep_runs_retry_of_fkey" FOREIGN KEY ("retry_of") REFERENCES "sweep_runs"("id") ON DELETE SET NULL ON UPDATE CASCADE;
DROP INDEX "sweep_runs_user_id_idempotency_key_key";
CREATE UNIQUE INDEX "sweep_runs_user_id_idempotency_key_attempt_key" ON "sweep_runs"("user_id", "idempotency_key", "attempt");
CREATE INDEX "sweep_runs_retry_of_idx" ON "sweep_runs"("retry_of");
