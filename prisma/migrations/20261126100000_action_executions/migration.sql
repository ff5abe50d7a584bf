-- Action executions (POST/GET /api/sweeps/objects/{object_id}/executions, GET/PATCH
-- /api/sweeps/executions/{execution_id}): an approved handoff of an action to an executor (the
-- approved steps and who approved them), the executor's reported outcome (step results, outcome
-- summary, measured metrics) and a workspace owner's review, with the scopes the owner approved
-- the record for. The status moves forward only (approved -> running -> completed | failed |
-- cancelled); the service enforces the order, the constraints below the states that may coexist.
CREATE TABLE "action_executions" (
    "id" UUID NOT NULL,
    "workspace_id" UUID NOT NULL,
    "entity_id" UUID NOT NULL,
    "action_id" UUID NOT NULL,
    "executor_platform" TEXT NOT NULL,
    "approved_by" UUID NOT NULL,
    "steps" TEXT[] NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'approved',
    "step_results" JSONB NOT NULL DEFAULT '[]',
    "outcome_summary" TEXT,
    "metrics" JSONB NOT NULL DEFAULT '{}',
    "review_status" TEXT NOT NULL DEFAULT 'pending',
    "reviewed_by" UUID,
    "reviewed_at" TIMESTAMPTZ(3),
    "training_scopes" TEXT[] NOT NULL DEFAULT ARRAY[]::TEXT[],
    "revision" INTEGER NOT NULL DEFAULT 1,
    "created_by" UUID NOT NULL,
    "updated_by" UUID NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "finished_at" TIMESTAMPTZ(3),
    CONSTRAINT "action_executions_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "action_executions_status_check" CHECK ("status" IN ('approved', 'running', 'completed', 'failed', 'cancelled')),
    CONSTRAINT "action_executions_review_status_check" CHECK ("review_status" IN ('pending', 'approved', 'rejected')),
    CONSTRAINT "action_executions_steps_check" CHECK (cardinality("steps") BETWEEN 1 AND 50),
    CONSTRAINT "action_executions_training_scopes_check"
      CHECK ("training_scopes" <@ ARRAY['internal_harness', 'external_harness', 'fine_tuning']::TEXT[]),
    -- Only a completed or failed execution is reviewed; only an approved review carries scopes.
    CONSTRAINT "action_executions_reviewable_check" CHECK ("review_status" = 'pending' OR "status" IN ('completed', 'failed')),
    CONSTRAINT "action_executions_scopes_approved_check" CHECK (cardinality("training_scopes") = 0 OR "review_status" = 'approved'),
    CONSTRAINT "action_executions_reviewed_check" CHECK (("review_status" = 'pending') = ("reviewed_at" IS NULL)),
    CONSTRAINT "action_executions_finished_check"
      CHECK (("finished_at" IS NULL) = ("status" IN ('approved', 'running')))
);
CREATE INDEX "action_executions_action_created_idx" ON "action_executions"("action_id", "created_at", "id");
ALTER TABLE "action_executions" ADD CONSTRAINT "action_executions_action_id_fkey" FOREIGN KEY ("action_id") REFERENCES "actions"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "action_executions" ADD CONSTRAINT "action_executions_entity_id_fkey" FOREIGN KEY ("entity_id") REFERENCES "entities"("id") ON DELETE CASCADE ON UPDATE CASCADE;
