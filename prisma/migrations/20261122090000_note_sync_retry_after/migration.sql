-- How long the provider asked us to wait before a failed sync is tried again (its Retry-After, in
-- seconds), so the failure answers it to the caller; null when the provider named none.
ALTER TABLE "note_syncs" ADD COLUMN "retry_after_seconds" INTEGER;
