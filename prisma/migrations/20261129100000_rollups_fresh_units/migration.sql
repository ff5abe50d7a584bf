-- The units' rollups (migration 20261122182000) after an insert, without reading the units back when
-- the statement stored the first units of every original it touched, as enrichment does: then each
-- original's contribution before the statement was nothing, and the inserted rows alone are the change
-- (the general path recounts each touched original from the table, through JSON). Which path applies
-- is decided after the entity locks are held, so a concurrent writer's units are seen as before.
CREATE OR REPLACE FUNCTION "opinion_rollups_inserted"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended('opinion_rollups:' || e, 0))
  FROM (SELECT DISTINCT entity_id::text AS e FROM added ORDER BY 1) ordered;
  IF (SELECT count(*) FROM opinion_units u WHERE u.content_id IN (SELECT content_id FROM added))
     = (SELECT count(*) FROM added) THEN
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
