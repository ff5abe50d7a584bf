-- The analysis event log's counter: appending an event increments it in the same
-- statement that inserts the event, so concurrent writers get consecutive numbers.
ALTER TABLE "analyses" ADD COLUMN "event_seq" INTEGER NOT NULL DEFAULT 0;
UPDATE "analyses" a SET "event_seq" = e.max_seq
FROM (SELECT "analysis_id", max("seq") AS max_seq FROM "analysis_events" GROUP BY "analysis_id") e
WHERE e."analysis_id" = a."id";
