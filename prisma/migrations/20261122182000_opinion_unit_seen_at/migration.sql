-- The intelligence summary (GET /agent/v1/intelligence/summary) counts an entity's opinion units
-- per window without reading the originals or every unit.
--
-- 1. Each unit carries `seen_at`, the moment of its original (publication time, else storage time),
--    or null when the original is not evidence (a row of kind 'summary', or a meeting note's own
--    row: metadata.kind 'meeting_note'; the rule of isEvidenceRow in src/analysis/scope.ts). A
--    trigger sets it when the unit is written; originals are never rewritten, so it stays true.
ALTER TABLE "opinion_units" ADD COLUMN "seen_at" TIMESTAMPTZ(3);

CREATE FUNCTION "opinion_units_set_seen_at"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  SELECT CASE WHEN c.kind <> 'summary' AND coalesce(c.metadata->>'kind', '') <> 'meeting_note'
              THEN coalesce(c.published_at, c.created_at) END
    INTO NEW.seen_at
    FROM content_store c WHERE c.id = NEW.content_id;
  RETURN NEW;
END $$;
CREATE TRIGGER "opinion_units_set_seen_at" BEFORE INSERT OR UPDATE OF "content_id" ON "opinion_units"
  FOR EACH ROW EXECUTE FUNCTION "opinion_units_set_seen_at"();

UPDATE "opinion_units" u
SET "seen_at" = CASE WHEN c.kind <> 'summary' AND coalesce(c.metadata->>'kind', '') <> 'meeting_note'
                     THEN coalesce(c.published_at, c.created_at) END
FROM "content_store" c WHERE c.id = u.content_id;

-- 2. Daily rollups of the units of evidence originals, per entity and UTC day of `seen_at`, kept
--    exact by statement-level triggers on every insert, update and delete of units. Levels:
--    0 the day (aspect '', side ''), 1 an aspect (side ''), 2 an aspect and a side (complaint,
--    praise, request, neutral), 3 an analyser version (aspect = the version, side '').
--    `statements` counts units; `sources` counts the distinct originals with at least one unit of
--    the key (meaningless at level 3). An original belongs to one day only, so sums over days are
--    exact distinct counts.
CREATE TABLE "opinion_rollups" (
    "entity_id" UUID NOT NULL,
    "day" DATE NOT NULL,
    "level" SMALLINT NOT NULL,
    "aspect" TEXT NOT NULL,
    "side" TEXT NOT NULL,
    "statements" INTEGER NOT NULL,
    "sources" INTEGER NOT NULL,
    CONSTRAINT "opinion_rollups_pkey" PRIMARY KEY ("entity_id", "day", "level", "aspect", "side")
);

-- The keys a unit counts under (none when its original is not evidence).
CREATE FUNCTION "opinion_unit_keys"(seen_at TIMESTAMPTZ, aspect TEXT, sentiment_label TEXT, kind TEXT, analyser_version SMALLINT)
RETURNS TABLE ("day" DATE, "level" SMALLINT, "aspect" TEXT, "side" TEXT) LANGUAGE sql IMMUTABLE AS $$
  SELECT (seen_at AT TIME ZONE 'UTC')::date, k.level, k.aspect, k.side
  FROM (VALUES
    (0::smallint, ''::text, ''::text),
    (1::smallint, aspect, ''),
    (2::smallint, aspect, CASE WHEN kind = 'request' THEN 'request' WHEN sentiment_label = 'negative' THEN 'complaint'
                               WHEN sentiment_label = 'positive' THEN 'praise' ELSE 'neutral' END),
    (3::smallint, analyser_version::text, '')
  ) AS k(level, aspect, side)
  WHERE seen_at IS NOT NULL AND (k.level IN (0, 3) OR k.aspect IS NOT NULL)
$$;

-- Applies a change of units: for every original touched, its contribution to each key before and
-- after (after = the table now; before = after - added + removed), added to the rollups.
CREATE FUNCTION "opinion_rollups_apply"(added JSONB, removed JSONB) RETURNS void LANGUAGE sql AS $$
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
    FROM opinion_units u CROSS JOIN LATERAL opinion_unit_keys(u.seen_at, u.aspect, u.sentiment_label, u.kind, u.analyser_version) k
    WHERE u.content_id IN (SELECT content_id FROM changed)
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

-- The columns a change needs, as JSON (a SQL function cannot read a trigger's transition tables).
CREATE FUNCTION "opinion_unit_change"(u opinion_units) RETURNS JSONB LANGUAGE sql IMMUTABLE AS $$
  SELECT jsonb_build_object('content_id', u.content_id, 'entity_id', u.entity_id, 'seen_at', u.seen_at, 'aspect', u.aspect,
    'sentiment_label', u.sentiment_label, 'kind', u.kind, 'analyser_version', u.analyser_version)
$$;
-- Writers of units of one entity are serialised on it (a transaction-scoped advisory lock per entity,
-- taken in entity order), so the next writer's count, a new statement, sees the first one's units. One
-- lock per entity, not per original: a statement touching 100,000 originals (an entity's deletion)
-- would otherwise need more locks than the server's lock table holds.
CREATE FUNCTION "opinion_rollups_lock"(changes JSONB) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended('opinion_rollups:' || e, 0))
  FROM (SELECT DISTINCT x->>'entity_id' AS e FROM jsonb_array_elements(changes) x ORDER BY 1) ordered;
END $$;
CREATE FUNCTION "opinion_rollups_inserted"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE a JSONB := coalesce((SELECT jsonb_agg(opinion_unit_change(n)) FROM added n), '[]'::jsonb);
BEGIN
  PERFORM opinion_rollups_lock(a);
  PERFORM opinion_rollups_apply(a, '[]'::jsonb);
  RETURN NULL;
END $$;
CREATE FUNCTION "opinion_rollups_deleted"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE r JSONB := coalesce((SELECT jsonb_agg(opinion_unit_change(o)) FROM removed o), '[]'::jsonb);
BEGIN
  PERFORM opinion_rollups_lock(r);
  PERFORM opinion_rollups_apply('[]'::jsonb, r);
  RETURN NULL;
END $$;
CREATE FUNCTION "opinion_rollups_updated"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  a JSONB := coalesce((SELECT jsonb_agg(opinion_unit_change(n)) FROM added n), '[]'::jsonb);
  r JSONB := coalesce((SELECT jsonb_agg(opinion_unit_change(o)) FROM removed o), '[]'::jsonb);
BEGIN
  PERFORM opinion_rollups_lock(a || r);
  PERFORM opinion_rollups_apply(a, r);
  RETURN NULL;
END $$;
CREATE FUNCTION "opinion_rollups_truncated"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  TRUNCATE opinion_rollups;
  RETURN NULL;
END $$;
CREATE TRIGGER "opinion_rollups_inserted" AFTER INSERT ON "opinion_units"
  REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION "opinion_rollups_inserted"();
CREATE TRIGGER "opinion_rollups_deleted" AFTER DELETE ON "opinion_units"
  REFERENCING OLD TABLE AS removed FOR EACH STATEMENT EXECUTE FUNCTION "opinion_rollups_deleted"();
CREATE TRIGGER "opinion_rollups_updated" AFTER UPDATE ON "opinion_units"
  REFERENCING OLD TABLE AS removed NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION "opinion_rollups_updated"();
CREATE TRIGGER "opinion_rollups_truncated" AFTER TRUNCATE ON "opinion_units"
  FOR EACH STATEMENT EXECUTE FUNCTION "opinion_rollups_truncated"();

INSERT INTO opinion_rollups (entity_id, day, level, aspect, side, statements, sources)
SELECT u.entity_id, k.day, k.level, k.aspect, k.side, count(*)::int, count(DISTINCT u.content_id)::int
FROM opinion_units u CROSS JOIN LATERAL opinion_unit_keys(u.seen_at, u.aspect, u.sentiment_label, u.kind, u.analyser_version) k
GROUP BY u.entity_id, k.day, k.level, k.aspect, k.side;

-- 3. Indexes: the units of the partial days at a window's edges (index-only), a theme's strongest
--    units first (quotes), and the originals of an entity per platform and window (index-only).
CREATE INDEX "opinion_units_entity_seen_idx" ON "opinion_units" ("entity_id", "seen_at")
  INCLUDE ("aspect", "sentiment_label", "kind", "content_id", "analyser_version") WHERE "seen_at" IS NOT NULL;
CREATE INDEX "opinion_units_entity_aspect_sentiment_idx" ON "opinion_units" ("entity_id", "aspect", "sentiment")
  INCLUDE ("seen_at", "sentiment_label", "kind") WHERE "seen_at" IS NOT NULL;
CREATE INDEX "content_store_entity_seen_idx" ON "content_store" ("entity_id", (coalesce("published_at", "created_at")))
  INCLUDE ("platform", "kind");
