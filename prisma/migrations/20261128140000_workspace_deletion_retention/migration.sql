-- Deleting a workspace and keeping originals for a limited time (src/deletion/workspaces.ts,
-- src/deletion/retention.ts; docs/api.md, "Deleting stored originals").

-- 1. A workspace's state and retention setting. `state` is read in the same statement as a membership
--    (src/workspaces/access.ts): a workspace in `deleting` is invisible to its members and their keys.
--    `purge_after` is set exactly while it is deleting; the owner may restore it until then.
ALTER TABLE "workspaces"
    ADD COLUMN "state" TEXT NOT NULL DEFAULT 'active',
    ADD COLUMN "deletion_requested_at" TIMESTAMPTZ(3),
    ADD COLUMN "deletion_requested_by" UUID,
    ADD COLUMN "purge_after" TIMESTAMPTZ(3),
    ADD COLUMN "retention_days" INTEGER,
    ADD CONSTRAINT "workspaces_state_check" CHECK ("state" IN ('active', 'deleting')),
    ADD CONSTRAINT "workspaces_purge_after_check" CHECK (("state" = 'deleting') = ("purge_after" IS NOT NULL)),
    ADD CONSTRAINT "workspaces_retention_days_check" CHECK ("retention_days" BETWEEN 1 AND 3650);
CREATE INDEX "workspaces_purge_due_idx" ON "workspaces"("purge_after") WHERE "state" = 'deleting';
CREATE INDEX "workspaces_retention_idx" ON "workspaces"("id") WHERE "retention_days" IS NOT NULL;

-- 2. Tombstones of originals removed by a retention pass or a workspace purge.
ALTER TABLE "content_deletions" DROP CONSTRAINT "content_deletions_reason_check";
ALTER TABLE "content_deletions" ADD CONSTRAINT "content_deletions_reason_check"
    CHECK ("reason" IN ('deleted', 'author_erased', 'retention', 'workspace_deleted'));

-- 3. The record of a workspace deletion, kept after the purge (no foreign key: it outlives the workspace).
--    It holds ids, times and counts only, never the workspace's name or anything written in it.
CREATE TABLE "workspace_deletions" (
    "id" UUID NOT NULL,
    "workspace_id" UUID NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'pending',
    "requested_by" UUID,
    "requested_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "purge_after" TIMESTAMPTZ(3) NOT NULL,
    "restored_by" UUID,
    "restored_at" TIMESTAMPTZ(3),
    "purge_started_at" TIMESTAMPTZ(3),
    "purged_at" TIMESTAMPTZ(3),
    "jobs_cancelled" INTEGER NOT NULL DEFAULT 0,
    "removed" JSONB NOT NULL DEFAULT '{}',

    CONSTRAINT "workspace_deletions_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "workspace_deletions_status_check" CHECK ("status" IN ('pending', 'restored', 'purging', 'purged'))
);
CREATE UNIQUE INDEX "workspace_deletions_open_key" ON "workspace_deletions"("workspace_id") WHERE "status" IN ('pending', 'purging');
CREATE INDEX "workspace_deletions_workspace_idx" ON "workspace_deletions"("workspace_id", "requested_at");

-- 4. Per workspace: what retention passes removed (the last pass and in all).
CREATE TABLE "retention_states" (
    "workspace_id" UUID NOT NULL,
    "pass_started_at" TIMESTAMPTZ(3),
    "pass_cutoff" TIMESTAMPTZ(3),
    "pass_removed" INTEGER NOT NULL DEFAULT 0,
    "last_pass_at" TIMESTAMPTZ(3),
    "last_cutoff" TIMESTAMPTZ(3),
    "removed_last_pass" INTEGER NOT NULL DEFAULT 0,
    "removed_total" BIGINT NOT NULL DEFAULT 0,
    "passes" INTEGER NOT NULL DEFAULT 0,

    CONSTRAINT "retention_states_pkey" PRIMARY KEY ("workspace_id")
);
ALTER TABLE "retention_states" ADD CONSTRAINT "retention_states_workspace_id_fkey" FOREIGN KEY ("workspace_id") REFERENCES "workspaces"("id") ON DELETE CASCADE ON UPDATE CASCADE;
