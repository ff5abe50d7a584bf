-- A collection job's row is updated two to four times in its life (the claim, progress, the settle that
-- completes it). The (status, updated_at) index made every one of those updates write a new entry into each of
-- the table's five indexes: both columns change each time, so no update could be HOT. Its only reader was the
-- metrics gauge of the oldest unfinished job, which now reads the table as the gauge of jobs per status beside it
-- always did. Without it no update changes an indexed column, and with room left on each page (fillfactor 80)
-- the new version stays on its page: HOT, with no index entries.
DROP INDEX IF EXISTS "collection_jobs_status_updated_at_idx";
ALTER TABLE "collection_jobs" SET (fillfactor = 80);
