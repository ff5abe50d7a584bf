-- How many evidence originals an entity stores per platform, without counting its rows: an analysis
-- reports the stored sources in its scope per platform (src/insights/analysis/retrieval.ts), which at
-- 1,000,000 originals of one entity took 0.6 s of a parallel scan. Every statement that stores or
-- removes originals appends one row per (entity, platform) it changed, with the signed number; the
-- count is their sum. Append-only, so concurrent ingest batches of one entity never wait on a shared
-- counter row; a statement adds one row per platform, so an entity of 10,000,000 originals stored in
-- 500-row batches sums about 20,000 rows (`content_count_deltas_compact` folds them when wanted).
-- Evidence follows isEvidenceRow (src/insights/analysis/scope.ts): no `summary` rows, no meeting
-- note's own row (metadata.kind 'meeting_note').
CREATE TABLE "content_count_deltas" (
    "id" BIGSERIAL PRIMARY KEY,
    "entity_id" UUID NOT NULL,
    "platform" TEXT NOT NULL,
    "delta" INTEGER NOT NULL
);
CREATE INDEX "content_count_deltas_entity_idx" ON "content_count_deltas" ("entity_id") INCLUDE ("platform", "delta");

CREATE FUNCTION "content_count_deltas_inserted"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO content_count_deltas (entity_id, platform, delta)
  SELECT n.entity_id, n.platform, count(*)::int FROM "new_rows" n
  WHERE n.kind <> 'summary' AND coalesce(n.metadata->>'kind', '') <> 'meeting_note'
  GROUP BY n.entity_id, n.platform;
  RETURN NULL;
END $$;
CREATE FUNCTION "content_count_deltas_deleted"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO content_count_deltas (entity_id, platform, delta)
  SELECT o.entity_id, o.platform, -count(*)::int FROM "old_rows" o
  WHERE o.kind <> 'summary' AND coalesce(o.metadata->>'kind', '') <> 'meeting_note'
  GROUP BY o.entity_id, o.platform;
  RETURN NULL;
END $$;
-- Originals are not rewritten (enrichment updates its own columns), so an update that moves a row in or
-- out of a count is rare: a row trigger, fired only when one of the counted columns changes, so the
-- enrichment's updates pay nothing.
CREATE FUNCTION "content_count_deltas_updated"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO content_count_deltas (entity_id, platform, delta)
  SELECT OLD.entity_id, OLD.platform, -1
  WHERE OLD.kind <> 'summary' AND coalesce(OLD.metadata->>'kind', '') <> 'meeting_note'
  UNION ALL
  SELECT NEW.entity_id, NEW.platform, 1
  WHERE NEW.kind <> 'summary' AND coalesce(NEW.metadata->>'kind', '') <> 'meeting_note';
  RETURN NULL;
END $$;
CREATE FUNCTION "content_count_deltas_truncated"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  TRUNCATE content_count_deltas;
  RETURN NULL;
END $$;
CREATE TRIGGER "content_count_deltas_inserted" AFTER INSERT ON "content_store"
  REFERENCING NEW TABLE AS "new_rows" FOR EACH STATEMENT EXECUTE FUNCTION "content_count_deltas_inserted"();
CREATE TRIGGER "content_count_deltas_deleted" AFTER DELETE ON "content_store"
  REFERENCING OLD TABLE AS "old_rows" FOR EACH STATEMENT EXECUTE FUNCTION "content_count_deltas_deleted"();
CREATE TRIGGER "content_count_deltas_updated" AFTER UPDATE ON "content_store" FOR EACH ROW
  WHEN (OLD.entity_id IS DISTINCT FROM NEW.entity_id OR OLD.platform IS DISTINCT FROM NEW.platform
        OR OLD.kind IS DISTINCT FROM NEW.kind OR (OLD.metadata->>'kind') IS DISTINCT FROM (NEW.metadata->>'kind'))
  EXECUTE FUNCTION "content_count_deltas_updated"();
CREATE TRIGGER "content_count_deltas_truncated" AFTER TRUNCATE ON "content_store"
  FOR EACH STATEMENT EXECUTE FUNCTION "content_count_deltas_truncated"();

-- Folds an entity's rows into one per platform (the sum is unchanged). Safe beside writers: it
-- replaces only the rows it read, under a lock that keeps two compactions of one entity apart.
CREATE FUNCTION "content_count_deltas_compact"(entity UUID) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended('content_count_deltas:' || entity::text, 0));
  WITH gone AS (DELETE FROM content_count_deltas WHERE entity_id = entity RETURNING platform, delta)
  INSERT INTO content_count_deltas (entity_id, platform, delta)
  SELECT entity, platform, sum(delta)::int FROM gone GROUP BY platform HAVING sum(delta) <> 0;
END $$;

-- The originals stored so far.
INSERT INTO content_count_deltas (entity_id, platform, delta)
SELECT entity_id, platform, count(*)::int FROM content_store
WHERE kind <> 'summary' AND coalesce(metadata->>'kind', '') <> 'meeting_note'
GROUP BY entity_id, platform;
