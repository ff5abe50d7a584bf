-- Share links (src/share): a read-only page of one analysis, knowledge record or entity, opened by
-- a token that is stored only as its SHA-256.
CREATE TABLE "share_links" (
    "id" UUID NOT NULL,
    "workspace_id" UUID NOT NULL,
    "resource_kind" TEXT NOT NULL,
    "resource_id" UUID NOT NULL,
    "token_hash" TEXT NOT NULL,
    "created_by" UUID,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "revoked_at" TIMESTAMPTZ(3),
    "revoked_by" UUID,

    CONSTRAINT "share_links_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "share_links_resource_kind_check" CHECK ("resource_kind" IN ('analysis', 'knowledge_record', 'entity')),
    CONSTRAINT "share_links_expiry_check" CHECK ("expires_at" > "created_at")
);

CREATE UNIQUE INDEX "share_links_token_hash_key" ON "share_links"("token_hash");
CREATE INDEX "share_links_workspace_created_idx" ON "share_links"("workspace_id", "created_at", "id");

ALTER TABLE "share_links" ADD CONSTRAINT "share_links_workspace_id_fkey" FOREIGN KEY ("workspace_id") REFERENCES "workspaces"("id") ON DELETE CASCADE ON UPDATE CASCADE;
