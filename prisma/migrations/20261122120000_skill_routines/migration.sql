-- Routines: a saved workflow (skill) run on a schedule with a per-run charge ceiling.
-- One routine per skill. `next_run_at` is the next occurrence the dispatcher claims
-- (FOR UPDATE SKIP LOCKED); it is null while the routine is paused. No foreign key to
-- `skills`: a routine outlives its skill so the dispatcher can record why it stopped.
CREATE TABLE "skill_routines" (
    "id" UUID NOT NULL,
    "skill_id" UUID NOT NULL,
    "entity_id" UUID NOT NULL,
    "workspace_id" UUID NOT NULL,
    "revision" INTEGER NOT NULL DEFAULT 1,
    "enabled" BOOLEAN NOT NULL,
    "interval_hours" INTEGER NOT NULL,
    "source_mode" TEXT NOT NULL,
    "max_charge_cents" INTEGER NOT NULL,
    "next_run_at" TIMESTAMPTZ(3),
    "last_occurrence_at" TIMESTAMPTZ(3),
    "last_run_at" TIMESTAMPTZ(3),
    "last_run_id" UUID,
    "last_outcome" TEXT,
    "last_outcome_detail" TEXT,
    -- Failed attempts at the due occurrence, and failed attempts ever.
    "dispatch_attempts" INTEGER NOT NULL DEFAULT 0,
    "dispatch_errors" INTEGER NOT NULL DEFAULT 0,
    "created_by" UUID NOT NULL,
    "updated_by" UUID NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "skill_routines_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "skill_routines_interval_check" CHECK ("interval_hours" IN (24, 168)),
    CONSTRAINT "skill_routines_source_mode_check" CHECK ("source_mode" IN ('saved', 'refresh')),
    CONSTRAINT "skill_routines_ceiling_check" CHECK ("max_charge_cents" BETWEEN 1 AND 10000),
    CONSTRAINT "skill_routines_enabled_next_check" CHECK (NOT "enabled" OR "next_run_at" IS NOT NULL)
);
CREATE UNIQUE INDEX "skill_routines_skill_id_key" ON "skill_routines"("skill_id");
CREATE INDEX "skill_routines_entity_id_idx" ON "skill_routines"("entity_id");
CREATE INDEX "skill_routines_due_idx" ON "skill_routines"("next_run_at") WHERE "enabled";

-- Every occurrence the dispatcher handled: a run started, or why none did. A failed dispatch
-- attempt leaves the occurrence due (counted in skill_routines.dispatch_errors).
CREATE TABLE "routine_occurrences" (
    "id" BIGSERIAL NOT NULL,
    "routine_id" UUID NOT NULL,
    "occurrence_at" TIMESTAMPTZ(3) NOT NULL,
    "outcome" TEXT NOT NULL,
    "reason" TEXT,
    "detail" TEXT,
    "run_id" UUID,
    "coalesced" INTEGER NOT NULL DEFAULT 0,
    "estimated_credits" INTEGER,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "routine_occurrences_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "routine_occurrences_outcome_check" CHECK ("outcome" IN ('dispatched', 'skipped'))
);
CREATE UNIQUE INDEX "routine_occurrences_routine_id_occurrence_at_key" ON "routine_occurrences"("routine_id", "occurrence_at");
CREATE INDEX "routine_occurrences_outcome_reason_idx" ON "routine_occurrences"("outcome", "reason");
ALTER TABLE "routine_occurrences" ADD CONSTRAINT "routine_occurrences_routine_id_fkey" FOREIGN KEY ("routine_id") REFERENCES "skill_routines"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- The dispatcher's heartbeat: when a dispatch pass last finished, and where.
CREATE TABLE "routine_dispatchers" (
    "name" TEXT NOT NULL,
    "last_seen_at" TIMESTAMPTZ(3) NOT NULL,
    "seen_by" TEXT NOT NULL,
    CONSTRAINT "routine_dispatchers_pkey" PRIMARY KEY ("name")
);

-- A run started by a routine names it and its occurrence; one run per occurrence.
ALTER TABLE "workflow_runs" ADD COLUMN "routine_id" UUID;
ALTER TABLE "workflow_runs" ADD COLUMN "routine_occurrence_at" TIMESTAMPTZ(3);
CREATE UNIQUE INDEX "workflow_runs_routine_id_routine_occurrence_at_key" ON "workflow_runs"("routine_id", "routine_occurrence_at");
