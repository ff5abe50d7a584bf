-- Evidence capture runs are a job kind of the shared lifecycle (src/jobs): they can be cancelled.
ALTER TABLE "sweep_runs" DROP CONSTRAINT "sweep_runs_status_check";
ALTER TABLE "sweep_runs" ADD CONSTRAINT "sweep_runs_status_check" CHECK ("status" IN ('queued', 'running', 'completed', 'failed', 'cancelled'));
