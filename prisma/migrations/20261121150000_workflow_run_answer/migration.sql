-- A workflow run keeps the answer given to its creating request, so a retry with the same
-- Idempotency-Key replays it exactly; `scope` is the priced run scope the run executes.
ALTER TABLE "workflow_runs" ADD COLUMN "response" JSONB;
ALTER TABLE "workflow_runs" ADD COLUMN "scope" JSONB;
ALTER TABLE "workflow_runs" ADD COLUMN "estimated_credits" INTEGER NOT NULL DEFAULT 0;
ALTER TABLE "workflow_runs" ADD CONSTRAINT "workflow_runs_charge_within_max" CHECK ("charged_credits" >= 0 AND "charged_credits" <= "max_charge_credits");
ALTER TABLE "credit_ledger" ADD CONSTRAINT "credit_ledger_kind_check" CHECK ("kind" IN ('grant', 'reserve', 'release', 'settle'));
