-- A sync's status, cancel and replay look it up by request_id alone (whoever in the caller's workspaces
-- started it, src/notes/service.ts visibleSync); the unique key leads with user_id and cannot serve that.
CREATE INDEX IF NOT EXISTS "note_syncs_request_id_idx" ON "note_syncs"("request_id");
