-- The units' roll-up triggers look up the units of the originals a statement touched one original at a
-- time, through the index on opinion_units (content_id, start_offset), instead of `content_id IN (…)` /
-- `= ANY(…)` over the whole set. The set forms were planned from the table's statistics: before the first
-- ANALYZE of a new table (the first minute of a fresh deployment's import) the planner expected half the
-- table to match and scanned all of it, twice a statement, so an enrichment chunk of 200 originals spent
-- 40 ms there at 80,000 units and would spend seconds at millions. A lookup per original is an index
-- probe whatever the statistics say.

-- The units now stored of each original in `ids` (one index probe each).
CREATE FUNCTION "opinion_units_of"(ids UUID[]) RETURNS SETOF opinion_units LANGUAGE sql STABLE AS $$
  SELECT u.* FROM unnest(ids) AS t(id) CROSS JOIN LATERAL (SELECT * FROM opinion_units o WHERE o.content_id = t.id) u
$$;

-- How many units the originals in `ids` hold now, counted per original through the index.
CREATE FUNCTION "opinion_units_count_of"(ids UUID[]) RETURNS bigint LANGUAGE sql STABLE AS $$
  SELECT coalesce(sum(c.n), 0)::bigint
  FROM unnest(ids) AS t(id) CROSS JOIN LATERAL (SELECT count(*) AS n FROM opinion_units o WHERE o.content_id = t.id) c
$$;

CREATE OR REPLACE FUNCTION "opinion_rollups_inserted"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended('opinion_rollups:' || e, 0))
  FROM (SELECT DISTINCT entity_id::text AS e FROM added ORDER BY 1) ordered;
  IF opinion_units_count_of(ARRAY(SELECT DISTINCT content_id FROM added)) = (SELECT count(*) FROM added) THEN
    INSERT INTO opinion_rollups AS r (entity_id, day, level, aspect, side, statements, sources)
    SELECT n.entity_id, k.day, k.level, k.aspect, k.side, count(*)::int, count(DISTINCT n.content_id)::int
    FROM added n CROSS JOIN LATERAL opinion_unit_keys(n.seen_at, n.aspect, n.sentiment_label, n.kind, n.analyser_version) k
    GROUP BY n.entity_id, k.day, k.level, k.aspect, k.side
    ON CONFLICT (entity_id, day, level, aspect, side)
    DO UPDATE SET statements = r.statements + EXCLUDED.statements, sources = r.sources + EXCLUDED.sources;
  ELSE
    PERFORM opinion_rollups_apply(coalesce((SELECT jsonb_agg(opinion_unit_change(n)) FROM added n), '[]'::jsonb), '[]'::jsonb);
  END IF;
  RETURN NULL;
END $$;

-- The general path's recount of each touched original, by index as well.
CREATE OR REPLACE FUNCTION "opinion_rollups_apply"(added JSONB, removed JSONB) RETURNS void LANGUAGE sql AS $$
  WITH changed AS (
    SELECT (a->>'content_id')::uuid AS content_id, (a->>'entity_id')::uuid AS entity_id, (a->>'seen_at')::timestamptz AS seen_at,
      a->>'aspect' AS aspect, a->>'sentiment_label' AS sentiment_label, a->>'kind' AS kind,
      (a->>'analyser_version')::smallint AS analyser_version, 1 AS sign
    FROM jsonb_array_elements(added) a
    UNION ALL
    SELECT (r->>'content_id')::uuid, (r->>'entity_id')::uuid, (r->>'seen_at')::timestamptz, r->>'aspect', r->>'sentiment_label',
      r->>'kind', (r->>'analyser_version')::smallint, -1
    FROM jsonb_array_elements(removed) r
  ), counted AS (
    SELECT u.content_id, u.entity_id, k.day, k.level, k.aspect, k.side, 1 AS now, 0 AS delta
    FROM opinion_units_of(ARRAY(SELECT DISTINCT content_id FROM changed)) u
      CROSS JOIN LATERAL opinion_unit_keys(u.seen_at, u.aspect, u.sentiment_label, u.kind, u.analyser_version) k
    UNION ALL
    SELECT c.content_id, c.entity_id, k.day, k.level, k.aspect, k.side, 0, c.sign
    FROM changed c CROSS JOIN LATERAL opinion_unit_keys(c.seen_at, c.aspect, c.sentiment_label, c.kind, c.analyser_version) k
  ), per_original AS (
    SELECT entity_id, day, level, aspect, side, sum(now) AS after, sum(now) - sum(delta) AS before
    FROM counted GROUP BY content_id, entity_id, day, level, aspect, side
  )
  INSERT INTO opinion_rollups AS r (entity_id, day, level, aspect, side, statements, sources)
  SELECT entity_id, day, level, aspect, side, sum(after - before)::int, sum((after > 0)::int - (before > 0)::int)::int
  FROM per_original GROUP BY entity_id, day, level, aspect, side
  HAVING sum(after - before) <> 0 OR sum((after > 0)::int - (before > 0)::int) <> 0
  ON CONFLICT (entity_id, day, level, aspect, side)
  DO UPDATE SET statements = r.statements + EXCLUDED.statements, sources = r.sources + EXCLUDED.sources
$$;

CREATE OR REPLACE FUNCTION "opinion_source_rollups_inserted"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE touched UUID[] := ARRAY(SELECT DISTINCT content_id FROM added);
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended('opinion_rollups:' || e, 0))
  FROM (SELECT DISTINCT entity_id::text AS e FROM added ORDER BY 1) ordered;
  IF opinion_units_count_of(touched) = (SELECT count(*) FROM added) THEN
    PERFORM opinion_source_apply(ARRAY(SELECT n::opinion_units FROM added n), 1);
  ELSE
    PERFORM opinion_source_apply(ARRAY(SELECT u FROM opinion_units_of(touched) u
      WHERE u.id NOT IN (SELECT id FROM added)), -1);
    PERFORM opinion_source_apply(ARRAY(SELECT u FROM opinion_units_of(touched) u), 1);
  END IF;
  RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION "opinion_source_rollups_deleted"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE touched UUID[] := ARRAY(SELECT DISTINCT content_id FROM removed);
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended('opinion_rollups:' || e, 0))
  FROM (SELECT DISTINCT entity_id::text AS e FROM removed ORDER BY 1) ordered;
  IF opinion_units_count_of(touched) = 0 THEN
    PERFORM opinion_source_apply(ARRAY(SELECT o::opinion_units FROM removed o), -1);
  ELSE
    PERFORM opinion_source_apply(ARRAY(SELECT u FROM opinion_units_of(touched) u)
      || ARRAY(SELECT o::opinion_units FROM removed o), -1);
    PERFORM opinion_source_apply(ARRAY(SELECT u FROM opinion_units_of(touched) u), 1);
  END IF;
  RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION "opinion_source_rollups_updated"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE touched UUID[] := ARRAY(SELECT content_id FROM added UNION SELECT content_id FROM removed);
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended('opinion_rollups:' || e, 0))
  FROM (SELECT entity_id::text AS e FROM added UNION SELECT entity_id::text FROM removed ORDER BY 1) ordered;
  PERFORM opinion_source_apply(ARRAY(SELECT u FROM opinion_units_of(touched) u
    WHERE u.id NOT IN (SELECT id FROM added)) || ARRAY(SELECT o::opinion_units FROM removed o), -1);
  PERFORM opinion_source_apply(ARRAY(SELECT u FROM opinion_units_of(touched) u), 1);
  RETURN NULL;
END $$;
