-- GET /api/analyses lists a workspace's analyses newest first, a keyset page at a time: one read along
-- (workspace_id, created_at, id), scanned backwards, per workspace the caller belongs to, merged.
CREATE INDEX "analyses_workspace_id_created_at_id_idx" ON "analyses"("workspace_id", "created_at", "id");

-- An analysis naming no entity or project belongs to no workspace: its starter's own, listed with theirs.
CREATE INDEX "analyses_personal_idx" ON "analyses"("user_id", "created_at", "id") WHERE "workspace_id" IS NULL;
