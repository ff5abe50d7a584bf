-- A retention pass holds its workspace while it runs: every batch renews pass_heartbeat_at, and another
-- pass takes the workspace only once that is older than the lease (src/deletion/retention.ts).
ALTER TABLE "retention_states" ADD COLUMN "pass_heartbeat_at" TIMESTAMPTZ(3);
