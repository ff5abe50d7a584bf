-- A job's end looks up the workflow runs waiting on it (src/jobs/lifecycle.ts): by collection job or
-- analysis, among queued or running runs. Partial indexes over live runs keep that look-up an index
-- probe whatever the number of finished runs.
CREATE INDEX "workflow_runs_live_collection_job_idx" ON "workflow_runs"("collection_job_id") WHERE "status" IN ('queued', 'running');
CREATE INDEX "workflow_runs_live_analysis_idx" ON "workflow_runs"("analysis_id") WHERE "status" IN ('queued', 'running');
