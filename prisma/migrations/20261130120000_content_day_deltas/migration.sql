-- The intelligence summary counts an entity's originals per platform in a window and the one before it
-- (src/insights/intelligence/sql.ts, platformCounts). That read every original of the two windows from
-- content_store_entity_seen_idx: 2.0 s for 365-day windows over 10,000,000 originals. Per entity, day
-- (UTC date of the moment an original is seen: published, else stored) and platform, the signed numbers
-- of sources (every kind but 'comment') and comments now accumulate in content_day_deltas, appended by
-- the statement triggers of content_store (append-only, as content_count_deltas: concurrent batches of
-- one entity never wait on a shared row). The summary sums the days wholly inside its windows and counts
-- the rows of the three days the windows cut. `content_day_deltas_compact(entity)` folds an entity's rows.
CREATE TABLE "content_day_deltas" (
    "id" BIGSERIAL PRIMARY KEY,
    "entity_id" UUID NOT NULL,
    "day" DATE NOT NULL,
    "platform" TEXT NOT NULL,
    "sources" INTEGER NOT NULL,
    "comments" INTEGER NOT NULL
);
CREATE INDEX "content_day_deltas_entity_day_idx" ON "content_day_deltas" ("entity_id", "day")
  INCLUDE ("platform", "sources", "comments");

-- Appends the signed counts of rows given as (sign, entity, day, platform, comment).
CREATE FUNCTION "content_day_deltas_add"(signs INTEGER[], entities UUID[], days DATE[], platforms TEXT[], comment BOOLEAN[])
RETURNS void LANGUAGE sql AS $$
  INSERT INTO content_day_deltas (entity_id, day, platform, sources, comments)
  SELECT g.* FROM (
    SELECT t.entity_id, t.day, t.platform,
      coalesce(sum(t.sign) FILTER (WHERE NOT t.comment), 0)::int AS sources,
      coalesce(sum(t.sign) FILTER (WHERE t.comment), 0)::int AS comments
    FROM unnest(signs, entities, days, platforms, comment) AS t(sign, entity_id, day, platform, comment)
    GROUP BY 1, 2, 3) g
  WHERE g.sources <> 0 OR g.comments <> 0
$$;

CREATE FUNCTION "content_day_deltas_inserted"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO content_day_deltas (entity_id, day, platform, sources, comments)
  SELECT n.entity_id, (coalesce(n.published_at, n.created_at) AT TIME ZONE 'UTC')::date, n.platform,
    count(*) FILTER (WHERE n.kind <> 'comment')::int, count(*) FILTER (WHERE n.kind = 'comment')::int
  FROM "new_rows" n
  GROUP BY 1, 2, 3;
  RETURN NULL;
END $$;
CREATE FUNCTION "content_day_deltas_deleted"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO content_day_deltas (entity_id, day, platform, sources, comments)
  SELECT o.entity_id, (coalesce(o.published_at, o.created_at) AT TIME ZONE 'UTC')::date, o.platform,
    -count(*) FILTER (WHERE o.kind <> 'comment')::int, -count(*) FILTER (WHERE o.kind = 'comment')::int
  FROM "old_rows" o
  GROUP BY 1, 2, 3;
  RETURN NULL;
END $$;
-- Rows whose entity, platform, moment or comment-ness changed move between counts (enrichment changes none).
CREATE FUNCTION "content_day_deltas_updated"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM content_day_deltas_add(array_agg(s.sign), array_agg(s.entity_id), array_agg(s.day), array_agg(s.platform),
    array_agg(s.comment))
  FROM "old_rows" o JOIN "new_rows" n ON n.id = o.id
  CROSS JOIN LATERAL (VALUES
    (-1, o.entity_id, (coalesce(o.published_at, o.created_at) AT TIME ZONE 'UTC')::date, o.platform, o.kind = 'comment'),
    (1, n.entity_id, (coalesce(n.published_at, n.created_at) AT TIME ZONE 'UTC')::date, n.platform, n.kind = 'comment')
  ) s(sign, entity_id, day, platform, comment)
  WHERE o.entity_id IS DISTINCT FROM n.entity_id OR o.platform IS DISTINCT FROM n.platform
     OR coalesce(o.published_at, o.created_at) IS DISTINCT FROM coalesce(n.published_at, n.created_at)
     OR (o.kind = 'comment') IS DISTINCT FROM (n.kind = 'comment')
  HAVING count(*) > 0;
  RETURN NULL;
END $$;
CREATE FUNCTION "content_day_deltas_truncated"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  TRUNCATE content_day_deltas;
  RETURN NULL;
END $$;
CREATE TRIGGER "content_day_deltas_inserted" AFTER INSERT ON "content_store"
  REFERENCING NEW TABLE AS "new_rows" FOR EACH STATEMENT EXECUTE FUNCTION "content_day_deltas_inserted"();
CREATE TRIGGER "content_day_deltas_deleted" AFTER DELETE ON "content_store"
  REFERENCING OLD TABLE AS "old_rows" FOR EACH STATEMENT EXECUTE FUNCTION "content_day_deltas_deleted"();
CREATE TRIGGER "content_day_deltas_updated" AFTER UPDATE ON "content_store"
  REFERENCING OLD TABLE AS "old_rows" NEW TABLE AS "new_rows" FOR EACH STATEMENT
  EXECUTE FUNCTION "content_day_deltas_updated"();
CREATE TRIGGER "content_day_deltas_truncated" AFTER TRUNCATE ON "content_store"
  FOR EACH STATEMENT EXECUTE FUNCTION "content_day_deltas_truncated"();

-- Folds an entity's rows into one per day and platform (the sums are unchanged); safe beside writers.
CREATE FUNCTION "content_day_deltas_compact"(entity UUID) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended('content_day_deltas:' || entity::text, 0));
  WITH gone AS (DELETE FROM content_day_deltas WHERE entity_id = entity RETURNING day, platform, sources, comments)
  INSERT INTO content_day_deltas (entity_id, day, platform, sources, comments)
  SELECT entity, day, platform, sum(sources)::int, sum(comments)::int FROM gone GROUP BY day, platform
  HAVING sum(sources) <> 0 OR sum(comments) <> 0;
END $$;

-- The originals stored so far.
INSERT INTO content_day_deltas (entity_id, day, platform, sources, comments)
SELECT entity_id, (coalesce(published_at, created_at) AT TIME ZONE 'UTC')::date, platform,
  count(*) FILTER (WHERE kind <> 'comment')::int, count(*) FILTER (WHERE kind = 'comment')::int
FROM content_store
GROUP BY 1, 2, 3;
