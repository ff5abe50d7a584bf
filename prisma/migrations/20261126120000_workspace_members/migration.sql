-- Teams: a member has an id of its own, a role among owner, admin, editor and viewer, and who added it.
-- The role "member" of before is an editor (it could write). Invitations by email wait for the first
-- sign-in of a user whose verified token carries that email. Membership changes are audited.
ALTER TABLE "workspace_members" ADD COLUMN "id" UUID NOT NULL DEFAULT gen_random_uuid();
ALTER TABLE "workspace_members" ADD COLUMN "added_by" UUID;
UPDATE "workspace_members" SET "role" = 'editor' WHERE "role" NOT IN ('owner', 'admin', 'editor', 'viewer');
ALTER TABLE "workspace_members" ALTER COLUMN "role" SET DEFAULT 'editor';
ALTER TABLE "workspace_members" ADD CONSTRAINT "workspace_members_role_check" CHECK ("role" IN ('owner', 'admin', 'editor', 'viewer'));
CREATE UNIQUE INDEX "workspace_members_id_key" ON "workspace_members"("id");

CREATE TABLE "workspace_invitations" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "workspace_id" UUID NOT NULL,
    "email" TEXT NOT NULL,
    "role" TEXT NOT NULL,
    "added_by" UUID NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "workspace_invitations_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "workspace_invitations_role_check" CHECK ("role" IN ('owner', 'admin', 'editor', 'viewer'))
);
-- One open invitation per email and workspace (emails compared case-insensitively).
CREATE UNIQUE INDEX "workspace_invitations_workspace_email_key" ON "workspace_invitations"("workspace_id", lower("email"));
CREATE INDEX "workspace_invitations_email_idx" ON "workspace_invitations"(lower("email"));
ALTER TABLE "workspace_invitations" ADD CONSTRAINT "workspace_invitations_workspace_id_fkey" FOREIGN KEY ("workspace_id") REFERENCES "workspaces"("id") ON DELETE CASCADE ON UPDATE CASCADE;

CREATE TABLE "workspace_audit" (
    "id" BIGSERIAL NOT NULL,
    "workspace_id" UUID NOT NULL,
    "actor_id" UUID,
    "action" TEXT NOT NULL,
    "target" TEXT,
    "detail" JSONB NOT NULL DEFAULT '{}',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "workspace_audit_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "workspace_audit_workspace_idx" ON "workspace_audit"("workspace_id", "id");
ALTER TABLE "workspace_audit" ADD CONSTRAINT "workspace_audit_workspace_id_fkey" FOREIGN KEY ("workspace_id") REFERENCES "workspaces"("id") ON DELETE CASCADE ON UPDATE CASCADE;
