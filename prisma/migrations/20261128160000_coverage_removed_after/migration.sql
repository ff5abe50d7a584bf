-- Coverage records say when rows were removed afterwards (src/coverage/removals.ts; docs/api.md, "Coverage").
-- A stored original names the run that stored it (`content_store.collection_run_id`, the record's `run_id`);
-- when such rows are deleted (a delete, an author erasure, retention), the cascade (src/deletion/cascade.ts)
-- adds them to the record of that run and platform, in the deleting transaction, one statement per batch.
-- The record's own counts (totals, targets) stay what the collector reported; these say how many of the
-- rows it stored are gone, and when the last one went.
ALTER TABLE "coverage_records"
    ADD COLUMN "removed_deleted" INTEGER NOT NULL DEFAULT 0,
    ADD COLUMN "removed_author_erased" INTEGER NOT NULL DEFAULT 0,
    ADD COLUMN "removed_retention" INTEGER NOT NULL DEFAULT 0,
    ADD COLUMN "last_removed_at" TIMESTAMPTZ(3);
