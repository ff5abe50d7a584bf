-- The export completeness audit (GET /agent/v1/export/completeness) counted, per entity and platform,
-- every stored row with text, a URL, an embedding, opinion units and enrichment by reading each row
-- (its text, its embedding) and probing its units: about a minute at 10,000,000 originals. The same
-- counts now accumulate in content_count_deltas beside the evidence count (`delta`), kept by the
-- statement triggers that already append to it and by new ones on updates and on opinion units:
--   rows             every stored row (the audit counts summaries and meeting notes' own rows too)
--   comments         rows of kind 'comment'
--   with_text        rows whose content has a non-space character
--   with_url         rows with a URL
--   with_embedding   rows with a non-empty embedding
--   with_units       rows with at least one opinion unit
--   with_enrichment  rows with an embedding and either units or enriched_at set
-- (the rules of src/delivery/export/completeness.ts). A row's units are written after the row, so a
-- stored row starts without units; a unit insert, update or delete changes `with_units` (and
-- `with_enrichment` for a row with an embedding but no enriched_at) for originals whose units went
-- from none to some or back, among those still stored. A deleted row takes its state with it (with
-- its units if they are still there: every deletion path of the service removes units first, and
-- then the units' trigger has counted them).
ALTER TABLE "content_count_deltas"
  ADD COLUMN "rows" INTEGER NOT NULL DEFAULT 0,
  ADD COLUMN "comments" INTEGER NOT NULL DEFAULT 0,
  ADD COLUMN "with_text" INTEGER NOT NULL DEFAULT 0,
  ADD COLUMN "with_url" INTEGER NOT NULL DEFAULT 0,
  ADD COLUMN "with_embedding" INTEGER NOT NULL DEFAULT 0,
  ADD COLUMN "with_units" INTEGER NOT NULL DEFAULT 0,
  ADD COLUMN "with_enrichment" INTEGER NOT NULL DEFAULT 0;

-- The audit's counts of rows given as (sign, entity, platform, flags), appended per (entity, platform);
-- groups whose every sum is zero are not written. Flags: evidence, comment, text, url, embedding, units,
-- enriched_at set.
CREATE FUNCTION "content_count_deltas_add"(signs INTEGER[], entities UUID[], platforms TEXT[], evidence BOOLEAN[],
  comment BOOLEAN[], has_text BOOLEAN[], has_url BOOLEAN[], embedded BOOLEAN[], units BOOLEAN[], enriched BOOLEAN[])
RETURNS void LANGUAGE sql AS $$
  INSERT INTO content_count_deltas (entity_id, platform, delta, rows, comments, with_text, with_url, with_embedding,
                                    with_units, with_enrichment)
  SELECT g.* FROM (
    SELECT t.entity_id, t.platform,
      coalesce(sum(t.sign) FILTER (WHERE t.evidence), 0)::int AS delta,
      sum(t.sign)::int AS rows,
      coalesce(sum(t.sign) FILTER (WHERE t.comment), 0)::int AS comments,
      coalesce(sum(t.sign) FILTER (WHERE t.has_text), 0)::int AS with_text,
      coalesce(sum(t.sign) FILTER (WHERE t.has_url), 0)::int AS with_url,
      coalesce(sum(t.sign) FILTER (WHERE t.embedded), 0)::int AS with_embedding,
      coalesce(sum(t.sign) FILTER (WHERE t.units), 0)::int AS with_units,
      coalesce(sum(t.sign) FILTER (WHERE t.embedded AND (t.units OR t.enriched)), 0)::int AS with_enrichment
    FROM unnest(signs, entities, platforms, evidence, comment, has_text, has_url, embedded, units, enriched)
      AS t(sign, entity_id, platform, evidence, comment, has_text, has_url, embedded, units, enriched)
    GROUP BY 1, 2) g
  WHERE (g.delta, g.rows, g.comments, g.with_text, g.with_url, g.with_embedding, g.with_units, g.with_enrichment)
    <> (0, 0, 0, 0, 0, 0, 0, 0)
$$;

-- Ingest's path, written out (no per-row composite): a row is stored before its units, so none has any yet.
CREATE OR REPLACE FUNCTION "content_count_deltas_inserted"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO content_count_deltas (entity_id, platform, delta, rows, comments, with_text, with_url, with_embedding,
                                    with_enrichment)
  SELECT n.entity_id, n.platform,
    count(*) FILTER (WHERE n.kind <> 'summary' AND coalesce(n.metadata->>'kind', '') <> 'meeting_note')::int,
    count(*)::int,
    count(*) FILTER (WHERE n.kind = 'comment')::int,
    count(*) FILTER (WHERE n.content ~ '[^[:space:]]')::int,
    count(*) FILTER (WHERE n.url <> '')::int,
    count(*) FILTER (WHERE coalesce(cardinality(n.embedding), 0) > 0)::int,
    count(*) FILTER (WHERE coalesce(cardinality(n.embedding), 0) > 0 AND n.enriched_at IS NOT NULL)::int
  FROM "new_rows" n
  GROUP BY n.entity_id, n.platform;
  RETURN NULL;
END $$;
CREATE OR REPLACE FUNCTION "content_count_deltas_deleted"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM content_count_deltas_add(array_agg(-1), array_agg(o.entity_id), array_agg(o.platform),
    array_agg(o.kind <> 'summary' AND coalesce(o.metadata->>'kind', '') <> 'meeting_note'), array_agg(o.kind = 'comment'),
    array_agg(o.content ~ '[^[:space:]]'), array_agg(o.url <> ''), array_agg(coalesce(cardinality(o.embedding), 0) > 0),
    array_agg(EXISTS (SELECT 1 FROM opinion_units u WHERE u.content_id = o.id)), array_agg(o.enriched_at IS NOT NULL))
  FROM "old_rows" o HAVING count(*) > 0;
  RETURN NULL;
END $$;
-- Every update statement (enrichment writes a chunk's embeddings and enriched_at in one): the changed
-- rows' state before, subtracted, and after, added.
DROP TRIGGER "content_count_deltas_updated" ON "content_store";
DROP FUNCTION "content_count_deltas_updated"();
CREATE FUNCTION "content_count_deltas_updated"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM content_count_deltas_add(array_agg(s.sign), array_agg(s.entity_id), array_agg(s.platform),
    array_agg(s.kind <> 'summary' AND coalesce(s.meta_kind, '') <> 'meeting_note'), array_agg(s.kind = 'comment'),
    array_agg(s.has_text), array_agg(s.url <> ''), array_agg(s.embedded), array_agg(c.units), array_agg(s.enriched))
  FROM (
    SELECT o.id, o.entity_id AS o_entity, o.platform AS o_platform, o.kind AS o_kind, o.metadata->>'kind' AS o_meta,
      o.content ~ '[^[:space:]]' AS o_text, o.url AS o_url, coalesce(cardinality(o.embedding), 0) > 0 AS o_embedded,
      o.enriched_at IS NOT NULL AS o_enriched,
      n.entity_id AS n_entity, n.platform AS n_platform, n.kind AS n_kind, n.metadata->>'kind' AS n_meta,
      n.content ~ '[^[:space:]]' AS n_text, n.url AS n_url, coalesce(cardinality(n.embedding), 0) > 0 AS n_embedded,
      n.enriched_at IS NOT NULL AS n_enriched,
      EXISTS (SELECT 1 FROM opinion_units u WHERE u.content_id = n.id) AS units
    FROM "old_rows" o JOIN "new_rows" n ON n.id = o.id
    WHERE o.entity_id IS DISTINCT FROM n.entity_id OR o.platform IS DISTINCT FROM n.platform
       OR o.kind IS DISTINCT FROM n.kind OR (o.metadata->>'kind') IS DISTINCT FROM (n.metadata->>'kind')
       OR o.url IS DISTINCT FROM n.url OR o.content IS DISTINCT FROM n.content
       OR coalesce(cardinality(o.embedding), 0) <> coalesce(cardinality(n.embedding), 0)
       OR (o.enriched_at IS NULL) <> (n.enriched_at IS NULL)
  ) c
  CROSS JOIN LATERAL (VALUES
    (-1, c.o_entity, c.o_platform, c.o_kind, c.o_meta, c.o_text, c.o_url, c.o_embedded, c.o_enriched),
    (1, c.n_entity, c.n_platform, c.n_kind, c.n_meta, c.n_text, c.n_url, c.n_embedded, c.n_enriched)
  ) s(sign, entity_id, platform, kind, meta_kind, has_text, url, embedded, enriched)
  HAVING count(*) > 0;
  RETURN NULL;
END $$;
CREATE TRIGGER "content_count_deltas_updated" AFTER UPDATE ON "content_store"
  REFERENCING OLD TABLE AS "old_rows" NEW TABLE AS "new_rows" FOR EACH STATEMENT
  EXECUTE FUNCTION "content_count_deltas_updated"();

-- Opinion units: the originals (still stored) whose units went from none to some, or back. `added` and
-- `removed` are each original's units the statement wrote and took away; what it had before is what it
-- has now less the added plus the removed.
CREATE FUNCTION "content_count_deltas_units"(ids UUID[], added INTEGER[], removed INTEGER[]) RETURNS void
LANGUAGE sql AS $$
  INSERT INTO content_count_deltas (entity_id, platform, delta, with_units, with_enrichment)
  SELECT c.entity_id, c.platform, 0, sum(s.d)::int,
    coalesce(sum(s.d) FILTER (WHERE c.enriched_at IS NULL AND coalesce(cardinality(c.embedding), 0) > 0), 0)::int
  FROM unnest(ids, added, removed) AS t(id, added, removed)
  JOIN content_store c ON c.id = t.id
  CROSS JOIN LATERAL (SELECT count(*)::int AS n FROM opinion_units u WHERE u.content_id = t.id) now
  CROSS JOIN LATERAL (SELECT (now.n > 0)::int - ((now.n - t.added + t.removed) > 0)::int AS d) s
  WHERE s.d <> 0
  GROUP BY c.entity_id, c.platform
$$;
CREATE FUNCTION "content_count_deltas_units_inserted"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM content_count_deltas_units(array_agg(g.id), array_agg(g.n), array_agg(0))
  FROM (SELECT content_id AS id, count(*)::int AS n FROM "new_units" GROUP BY content_id) g HAVING count(*) > 0;
  RETURN NULL;
END $$;
CREATE FUNCTION "content_count_deltas_units_deleted"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM content_count_deltas_units(array_agg(g.id), array_agg(0), array_agg(g.n))
  FROM (SELECT content_id AS id, count(*)::int AS n FROM "old_units" GROUP BY content_id) g HAVING count(*) > 0;
  RETURN NULL;
END $$;
CREATE FUNCTION "content_count_deltas_units_updated"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM content_count_deltas_units(array_agg(g.id), array_agg(g.added), array_agg(g.removed))
  FROM (
    SELECT id, sum(added)::int AS added, sum(removed)::int AS removed FROM (
      SELECT content_id AS id, 1 AS added, 0 AS removed FROM "new_units"
      UNION ALL
      SELECT content_id, 0, 1 FROM "old_units") x
    GROUP BY id) g
  HAVING count(*) > 0;
  RETURN NULL;
END $$;
-- Emptying the units table (tests, benchmarks) recounts every original's units and enrichment: none has units.
CREATE FUNCTION "content_count_deltas_units_truncated"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO content_count_deltas (entity_id, platform, delta, with_units, with_enrichment)
  SELECT d.entity_id, d.platform, 0, -sum(d.with_units)::int, -sum(d.with_enrichment)::int FROM content_count_deltas d
  GROUP BY d.entity_id, d.platform HAVING sum(d.with_units) <> 0 OR sum(d.with_enrichment) <> 0;
  INSERT INTO content_count_deltas (entity_id, platform, delta, with_enrichment)
  SELECT c.entity_id, c.platform, 0, count(*)::int FROM content_store c
  WHERE coalesce(cardinality(c.embedding), 0) > 0 AND c.enriched_at IS NOT NULL
  GROUP BY c.entity_id, c.platform;
  RETURN NULL;
END $$;
CREATE TRIGGER "content_count_deltas_units_inserted" AFTER INSERT ON "opinion_units"
  REFERENCING NEW TABLE AS "new_units" FOR EACH STATEMENT EXECUTE FUNCTION "content_count_deltas_units_inserted"();
CREATE TRIGGER "content_count_deltas_units_deleted" AFTER DELETE ON "opinion_units"
  REFERENCING OLD TABLE AS "old_units" FOR EACH STATEMENT EXECUTE FUNCTION "content_count_deltas_units_deleted"();
CREATE TRIGGER "content_count_deltas_units_updated" AFTER UPDATE ON "opinion_units"
  REFERENCING OLD TABLE AS "old_units" NEW TABLE AS "new_units" FOR EACH STATEMENT
  EXECUTE FUNCTION "content_count_deltas_units_updated"();
CREATE TRIGGER "content_count_deltas_units_truncated" AFTER TRUNCATE ON "opinion_units"
  FOR EACH STATEMENT EXECUTE FUNCTION "content_count_deltas_units_truncated"();

-- Folding keeps every sum.
CREATE OR REPLACE FUNCTION "content_count_deltas_compact"(entity UUID) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended('content_count_deltas:' || entity::text, 0));
  WITH gone AS (DELETE FROM content_count_deltas WHERE entity_id = entity RETURNING *)
  INSERT INTO content_count_deltas (entity_id, platform, delta, rows, comments, with_text, with_url, with_embedding,
                                    with_units, with_enrichment)
  SELECT g.* FROM (
    SELECT entity, platform, sum(delta)::int AS delta, sum(rows)::int AS rows, sum(comments)::int AS comments,
      sum(with_text)::int AS with_text, sum(with_url)::int AS with_url, sum(with_embedding)::int AS with_embedding,
      sum(with_units)::int AS with_units, sum(with_enrichment)::int AS with_enrichment
    FROM gone GROUP BY platform) g
  WHERE (g.delta, g.rows, g.comments, g.with_text, g.with_url, g.with_embedding, g.with_units, g.with_enrichment)
    <> (0, 0, 0, 0, 0, 0, 0, 0);
END $$;

-- The rows stored so far: their audit counts, beside the evidence counts already summed.
INSERT INTO content_count_deltas (entity_id, platform, delta, rows, comments, with_text, with_url, with_embedding,
                                  with_units, with_enrichment)
SELECT c.entity_id, c.platform, 0, count(*)::int,
  count(*) FILTER (WHERE c.kind = 'comment')::int,
  count(*) FILTER (WHERE c.content ~ '[^[:space:]]')::int,
  count(*) FILTER (WHERE c.url <> '')::int,
  count(*) FILTER (WHERE coalesce(cardinality(c.embedding), 0) > 0)::int,
  count(*) FILTER (WHERE u.has)::int,
  count(*) FILTER (WHERE coalesce(cardinality(c.embedding), 0) > 0 AND (u.has OR c.enriched_at IS NOT NULL))::int
FROM content_store c
LEFT JOIN LATERAL (SELECT true AS has FROM opinion_units o WHERE o.content_id = c.id LIMIT 1) u ON true
GROUP BY c.entity_id, c.platform;
