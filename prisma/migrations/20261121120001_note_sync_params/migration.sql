-- What a meeting-note sync was asked to import (cursor, filters, page size), so the
-- job payload carries only the sync id and the sealed credential. Never the api_key.
ALTER TABLE "note_syncs" ADD COLUMN "params" JSONB NOT NULL DEFAULT '{}';
