-- The counts of an analysis over every stored source in its scope (src/insights/analysis/scope-counts.ts)
-- without reading the scope's units: per entity, per focus of a question, per aspect, the number of
-- evidence originals whose units about that aspect take each combination of sides.
--
-- A unit counts under its aspect and under each of its terms (the names a theme's aspect is matched
-- against), for every focus it fits: '' (every unit), 'requests' (kind request), 'bugs' (kind bug),
-- 'churn' (churn, or an unfavourable comparison) and 'comparison' (compared with another product). An
-- original's units about one aspect under one focus combine into `sides`, a bit set: 1 complaint (a
-- bug, or a negative unit that is no request), 2 praise (a positive opinion or question), 4 request;
-- 0 is an original that mentions the aspect without taking a side. `sources` counts the originals with
-- that combination, so each original counts once per (focus, aspect). Units of originals that are not
-- evidence (seen_at null: summaries, a meeting note's own row) count nowhere.
CREATE TABLE "opinion_source_rollups" (
    "entity_id" UUID NOT NULL,
    "focus" TEXT NOT NULL,
    "aspect" TEXT NOT NULL,
    "sides" SMALLINT NOT NULL,
    "sources" INTEGER NOT NULL,
    CONSTRAINT "opinion_source_rollups_pkey" PRIMARY KEY ("entity_id", "focus", "aspect", "sides")
);

-- The (focus, name) keys one unit counts under, with the sides it takes.
CREATE FUNCTION "opinion_source_keys"(seen_at TIMESTAMPTZ, aspect TEXT, terms TEXT[], kind TEXT, sentiment_label TEXT,
  compared_with TEXT, churn BOOLEAN)
RETURNS TABLE ("focus" TEXT, "name" TEXT, "complaint" BOOLEAN, "praise" BOOLEAN, "request" BOOLEAN) LANGUAGE sql IMMUTABLE AS $$
  SELECT f.focus, n.name, kind <> 'request' AND (kind = 'bug' OR sentiment_label = 'negative'),
    kind NOT IN ('request', 'bug') AND sentiment_label = 'positive', kind = 'request'
  FROM (VALUES ('', true), ('requests', kind = 'request'), ('bugs', kind = 'bug'),
               ('churn', churn OR (compared_with IS NOT NULL AND sentiment_label = 'negative')),
               ('comparison', compared_with IS NOT NULL)) AS f(focus, fits)
    CROSS JOIN LATERAL unnest(array_prepend(aspect, terms)) AS n(name)
  WHERE seen_at IS NOT NULL AND f.fits AND n.name IS NOT NULL
$$;

-- Adds (sign 1) or takes away (sign -1) the contributions of whole originals' units: each original counts
-- once per (focus, aspect), under the sides its units there take together.
CREATE FUNCTION "opinion_source_apply"(units opinion_units[], sign INT) RETURNS void LANGUAGE sql AS $$
  INSERT INTO opinion_source_rollups AS r (entity_id, focus, aspect, sides, sources)
  SELECT entity_id, focus, name, sides, sign * count(*)::int
  FROM (SELECT n.content_id, n.entity_id, k.focus, k.name,
          (bool_or(k.complaint)::int + 2 * bool_or(k.praise)::int + 4 * bool_or(k.request)::int)::smallint AS sides
        FROM unnest(units) n
          CROSS JOIN LATERAL opinion_source_keys(n.seen_at, n.aspect, n.terms, n.kind, n.sentiment_label, n.compared_with, n.churn) k
        GROUP BY n.content_id, n.entity_id, k.focus, k.name) per_original
  GROUP BY entity_id, focus, name, sides
  ON CONFLICT (entity_id, focus, aspect, sides) DO UPDATE SET sources = r.sources + EXCLUDED.sources
$$;

-- Writers are serialised per entity on the lock the daily rollups take (opinion_rollups_lock's key, taken
-- again here: a transaction holding it takes it at once), so each sees the others' units before it counts.
-- An insert of the first units of every original it touches (enrichment) and a delete of all the units of
-- every original it touches (a deletion) are counted from their own rows. Anything else recounts the
-- originals it touches: their units before the statement taken away, their units now added.
CREATE FUNCTION "opinion_source_rollups_inserted"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE touched UUID[] := ARRAY(SELECT DISTINCT content_id FROM added);
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended('opinion_rollups:' || e, 0))
  FROM (SELECT DISTINCT entity_id::text AS e FROM added ORDER BY 1) ordered;
  IF (SELECT count(*) FROM opinion_units u WHERE u.content_id = ANY(touched)) = (SELECT count(*) FROM added) THEN
    PERFORM opinion_source_apply(ARRAY(SELECT n::opinion_units FROM added n), 1);
  ELSE
    PERFORM opinion_source_apply(ARRAY(SELECT u FROM opinion_units u
      WHERE u.content_id = ANY(touched) AND u.id NOT IN (SELECT id FROM added)), -1);
    PERFORM opinion_source_apply(ARRAY(SELECT u FROM opinion_units u WHERE u.content_id = ANY(touched)), 1);
  END IF;
  RETURN NULL;
END $$;

CREATE FUNCTION "opinion_source_rollups_deleted"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE touched UUID[] := ARRAY(SELECT DISTINCT content_id FROM removed);
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended('opinion_rollups:' || e, 0))
  FROM (SELECT DISTINCT entity_id::text AS e FROM removed ORDER BY 1) ordered;
  IF NOT EXISTS (SELECT 1 FROM opinion_units u WHERE u.content_id = ANY(touched)) THEN
    PERFORM opinion_source_apply(ARRAY(SELECT o::opinion_units FROM removed o), -1);
  ELSE
    PERFORM opinion_source_apply(ARRAY(SELECT u FROM opinion_units u WHERE u.content_id = ANY(touched))
      || ARRAY(SELECT o::opinion_units FROM removed o), -1);
    PERFORM opinion_source_apply(ARRAY(SELECT u FROM opinion_units u WHERE u.content_id = ANY(touched)), 1);
  END IF;
  RETURN NULL;
END $$;

CREATE FUNCTION "opinion_source_rollups_updated"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE touched UUID[] := ARRAY(SELECT content_id FROM added UNION SELECT content_id FROM removed);
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended('opinion_rollups:' || e, 0))
  FROM (SELECT entity_id::text AS e FROM added UNION SELECT entity_id::text FROM removed ORDER BY 1) ordered;
  PERFORM opinion_source_apply(ARRAY(SELECT u FROM opinion_units u
    WHERE u.content_id = ANY(touched) AND u.id NOT IN (SELECT id FROM added)) || ARRAY(SELECT o::opinion_units FROM removed o), -1);
  PERFORM opinion_source_apply(ARRAY(SELECT u FROM opinion_units u WHERE u.content_id = ANY(touched)), 1);
  RETURN NULL;
END $$;

CREATE FUNCTION "opinion_source_rollups_truncated"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  TRUNCATE opinion_source_rollups;
  RETURN NULL;
END $$;

CREATE TRIGGER "opinion_source_rollups_inserted" AFTER INSERT ON "opinion_units"
  REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION "opinion_source_rollups_inserted"();
CREATE TRIGGER "opinion_source_rollups_deleted" AFTER DELETE ON "opinion_units"
  REFERENCING OLD TABLE AS removed FOR EACH STATEMENT EXECUTE FUNCTION "opinion_source_rollups_deleted"();
CREATE TRIGGER "opinion_source_rollups_updated" AFTER UPDATE ON "opinion_units"
  REFERENCING OLD TABLE AS removed NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION "opinion_source_rollups_updated"();
CREATE TRIGGER "opinion_source_rollups_truncated" AFTER TRUNCATE ON "opinion_units"
  FOR EACH STATEMENT EXECUTE FUNCTION "opinion_source_rollups_truncated"();

-- The units stored so far, entity by entity (opinion_source_apply's grouping, over the table).
INSERT INTO opinion_source_rollups (entity_id, focus, aspect, sides, sources)
SELECT entity_id, focus, name, sides, count(*)::int
FROM (SELECT u.content_id, u.entity_id, k.focus, k.name,
        (bool_or(k.complaint)::int + 2 * bool_or(k.praise)::int + 4 * bool_or(k.request)::int)::smallint AS sides
      FROM opinion_units u
        CROSS JOIN LATERAL opinion_source_keys(u.seen_at, u.aspect, u.terms, u.kind, u.sentiment_label, u.compared_with, u.churn) k
      GROUP BY u.content_id, u.entity_id, k.focus, k.name) per_original
GROUP BY entity_id, focus, name, sides;
