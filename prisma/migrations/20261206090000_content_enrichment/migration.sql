-- What enrichment writes of an original (its embedding and model, when it was enriched, its feedback kind
-- and that kind's confidence) moves from content_store to a table of its own. An original was stored by
-- COPY onto full pages and then rewritten whole by enrichment: never a HOT update, so each enriched row
-- left a dead 1.5 KB version behind and took a new entry in every index of content_store, the full-text GIN
-- among them (about 185 µs of PostgreSQL a row against 35 µs for an insert here; docs/benchmarks.md). Now
-- an original is written once, and its enrichment is one narrow insert.
--
-- The row carries copies of its original's entity, platform and stored time, kept by a trigger when the
-- original moves: the kind index orders an entity's sources by them, and the audit's counts keep the
-- (entity, platform) of a row that is deleted with its original.
CREATE TABLE "content_enrichment" (
    "content_id" UUID NOT NULL,
    "entity_id" UUID NOT NULL,
    "platform" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL,
    "embedding" REAL[],
    "embedding_model" TEXT,
    "enriched_at" TIMESTAMPTZ(3),
    "feedback_kind" TEXT,
    "feedback_kind_confidence" REAL,
    CONSTRAINT "content_enrichment_pkey" PRIMARY KEY ("content_id"),
    CONSTRAINT "content_enrichment_content_id_fkey" FOREIGN KEY ("content_id") REFERENCES "content_store" ("id") ON DELETE CASCADE,
    CONSTRAINT "content_enrichment_feedback_kind_check"
      CHECK ("feedback_kind" IN ('bug_report', 'feature_request', 'question', 'praise', 'complaint', 'other')),
    CONSTRAINT "content_enrichment_feedback_kind_confidence_check"
      CHECK ("feedback_kind_confidence" >= 0 AND "feedback_kind_confidence" <= 1)
);

INSERT INTO "content_enrichment" (content_id, entity_id, platform, created_at, embedding, embedding_model, enriched_at,
                                  feedback_kind, feedback_kind_confidence)
SELECT id, entity_id, platform, created_at, embedding, embedding_model, enriched_at, feedback_kind, feedback_kind_confidence
FROM "content_store"
WHERE embedding IS NOT NULL OR embedding_model IS NOT NULL OR enriched_at IS NOT NULL OR feedback_kind IS NOT NULL
   OR feedback_kind_confidence IS NOT NULL;

-- An analysis's sources of the asked kind, most surely so first (src/insights/analysis/sample.ts), as
-- content_store_entity_kind_sure_idx ordered them.
CREATE INDEX "content_enrichment_entity_kind_sure_idx" ON "content_enrichment"
  ("entity_id", "feedback_kind", "feedback_kind_confidence" DESC NULLS LAST, "created_at" DESC, "content_id" DESC)
  WHERE "feedback_kind" IS NOT NULL;

-- The audit's with_embedding and with_enrichment counts (migration 20261130100000) follow the enrichment
-- rows: appended per (entity, platform) by the enrichment table's own statement triggers. A row counts
-- with_embedding when its embedding is not empty, with_enrichment when it also has enriched_at or units.
CREATE FUNCTION "content_enrichment_counts"(signs INTEGER[], entities UUID[], platforms TEXT[], embedded BOOLEAN[],
  enriched BOOLEAN[]) RETURNS void LANGUAGE sql AS $$
  INSERT INTO content_count_deltas (entity_id, platform, delta, with_embedding, with_enrichment)
  SELECT g.* FROM (
    SELECT t.entity_id, t.platform, 0,
      coalesce(sum(t.sign) FILTER (WHERE t.embedded), 0)::int AS with_embedding,
      coalesce(sum(t.sign) FILTER (WHERE t.embedded AND t.enriched), 0)::int AS with_enrichment
    FROM unnest(signs, entities, platforms, embedded, enriched) AS t(sign, entity_id, platform, embedded, enriched)
    GROUP BY 1, 2) g
  WHERE (g.with_embedding, g.with_enrichment) <> (0, 0)
$$;

CREATE FUNCTION "content_enrichment_inserted"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM content_enrichment_counts(array_agg(1), array_agg(n.entity_id), array_agg(n.platform),
    array_agg(coalesce(cardinality(n.embedding), 0) > 0),
    array_agg(n.enriched_at IS NOT NULL OR EXISTS (SELECT 1 FROM opinion_units u WHERE u.content_id = n.content_id)))
  FROM "new_rows" n HAVING count(*) > 0;
  RETURN NULL;
END $$;
CREATE FUNCTION "content_enrichment_deleted"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM content_enrichment_counts(array_agg(-1), array_agg(o.entity_id), array_agg(o.platform),
    array_agg(coalesce(cardinality(o.embedding), 0) > 0),
    array_agg(o.enriched_at IS NOT NULL OR EXISTS (SELECT 1 FROM opinion_units u WHERE u.content_id = o.content_id)))
  FROM "old_rows" o HAVING count(*) > 0;
  RETURN NULL;
END $$;
-- The changed rows whose counts can differ (moved, or embedded or enriched_at changed): before subtracted,
-- after added. The units are the same on both sides (this statement does not write them).
CREATE FUNCTION "content_enrichment_updated"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM content_enrichment_counts(array_agg(s.sign), array_agg(s.entity_id), array_agg(s.platform),
    array_agg(s.embedded), array_agg(s.enriched OR c.units))
  FROM (
    SELECT f.*, EXISTS (SELECT 1 FROM opinion_units u WHERE u.content_id = f.content_id) AS units
    FROM (
      SELECT o.content_id, o.entity_id AS o_entity, o.platform AS o_platform,
        coalesce(cardinality(o.embedding), 0) > 0 AS o_embedded, o.enriched_at IS NOT NULL AS o_enriched,
        n.entity_id AS n_entity, n.platform AS n_platform,
        coalesce(cardinality(n.embedding), 0) > 0 AS n_embedded, n.enriched_at IS NOT NULL AS n_enriched
      FROM "old_rows" o JOIN "new_rows" n ON n.content_id = o.content_id
      OFFSET 0
    ) f
    WHERE f.o_entity IS DISTINCT FROM f.n_entity OR f.o_platform IS DISTINCT FROM f.n_platform
       OR f.o_embedded <> f.n_embedded OR f.o_enriched <> f.n_enriched
  ) c
  CROSS JOIN LATERAL (VALUES
    (-1, c.o_entity, c.o_platform, c.o_embedded, c.o_enriched),
    (1, c.n_entity, c.n_platform, c.n_embedded, c.n_enriched)
  ) s(sign, entity_id, platform, embedded, enriched)
  HAVING count(*) > 0;
  RETURN NULL;
END $$;
CREATE FUNCTION "content_enrichment_truncated"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO content_count_deltas (entity_id, platform, delta, with_embedding, with_enrichment)
  SELECT d.entity_id, d.platform, 0, -sum(d.with_embedding)::int, -sum(d.with_enrichment)::int FROM content_count_deltas d
  GROUP BY d.entity_id, d.platform HAVING sum(d.with_embedding) <> 0 OR sum(d.with_enrichment) <> 0;
  RETURN NULL;
END $$;
CREATE TRIGGER "content_enrichment_inserted" AFTER INSERT ON "content_enrichment"
  REFERENCING NEW TABLE AS "new_rows" FOR EACH STATEMENT EXECUTE FUNCTION "content_enrichment_inserted"();
CREATE TRIGGER "content_enrichment_deleted" AFTER DELETE ON "content_enrichment"
  REFERENCING OLD TABLE AS "old_rows" FOR EACH STATEMENT EXECUTE FUNCTION "content_enrichment_deleted"();
CREATE TRIGGER "content_enrichment_updated" AFTER UPDATE ON "content_enrichment"
  REFERENCING OLD TABLE AS "old_rows" NEW TABLE AS "new_rows" FOR EACH STATEMENT
  EXECUTE FUNCTION "content_enrichment_updated"();
CREATE TRIGGER "content_enrichment_truncated" AFTER TRUNCATE ON "content_enrichment"
  FOR EACH STATEMENT EXECUTE FUNCTION "content_enrichment_truncated"();

-- An original that moves (entity, platform) or is re-dated takes its enrichment row's copies with it.
CREATE FUNCTION "content_enrichment_follow"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE content_enrichment SET entity_id = NEW.entity_id, platform = NEW.platform, created_at = NEW.created_at
  WHERE content_id = NEW.id;
  RETURN NULL;
END $$;
CREATE TRIGGER "content_enrichment_follow" AFTER UPDATE OF "entity_id", "platform", "created_at" ON "content_store"
  FOR EACH ROW WHEN (OLD.entity_id IS DISTINCT FROM NEW.entity_id OR OLD.platform IS DISTINCT FROM NEW.platform
                     OR OLD.created_at IS DISTINCT FROM NEW.created_at)
  EXECUTE FUNCTION "content_enrichment_follow"();

-- content_store's own count triggers no longer see an embedding or enriched_at: its rows count rows, comments,
-- text, URLs and units; the two enrichment counts are the enrichment table's.
CREATE OR REPLACE FUNCTION "content_count_deltas_inserted"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO content_count_deltas (entity_id, platform, delta, rows, comments, with_text, with_url)
  SELECT n.entity_id, n.platform,
    count(*) FILTER (WHERE n.kind <> 'summary' AND coalesce(n.metadata->>'kind', '') <> 'meeting_note')::int,
    count(*)::int,
    count(*) FILTER (WHERE n.kind = 'comment')::int,
    count(*) FILTER (WHERE n.content ~ '[^[:space:]]')::int,
    count(*) FILTER (WHERE n.url <> '')::int
  FROM "new_rows" n
  GROUP BY n.entity_id, n.platform;
  RETURN NULL;
END $$;
CREATE OR REPLACE FUNCTION "content_count_deltas_deleted"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM content_count_deltas_add(array_agg(-1), array_agg(o.entity_id), array_agg(o.platform),
    array_agg(o.kind <> 'summary' AND coalesce(o.metadata->>'kind', '') <> 'meeting_note'), array_agg(o.kind = 'comment'),
    array_agg(o.content ~ '[^[:space:]]'), array_agg(o.url <> ''), array_agg(false),
    array_agg(EXISTS (SELECT 1 FROM opinion_units u WHERE u.content_id = o.id)), array_agg(false))
  FROM "old_rows" o HAVING count(*) > 0;
  RETURN NULL;
END $$;
CREATE OR REPLACE FUNCTION "content_count_deltas_updated"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM content_count_deltas_add(array_agg(s.sign), array_agg(s.entity_id), array_agg(s.platform),
    array_agg(s.kind <> 'summary' AND coalesce(s.meta_kind, '') <> 'meeting_note'), array_agg(s.kind = 'comment'),
    array_agg(s.has_text), array_agg(s.url <> ''), array_agg(false), array_agg(c.units), array_agg(false))
  FROM (
    SELECT f.*,
      CASE WHEN f.moved OR f.text_changed THEN f.o_content ~ '[^[:space:]]' ELSE false END AS o_text,
      CASE WHEN f.moved OR f.text_changed THEN f.n_content ~ '[^[:space:]]' ELSE false END AS n_text,
      CASE WHEN f.moved THEN EXISTS (SELECT 1 FROM opinion_units u WHERE u.content_id = f.id) ELSE false END AS units
    FROM (
      SELECT o.id, o.entity_id AS o_entity, o.platform AS o_platform, o.kind AS o_kind, o.metadata->>'kind' AS o_meta,
        o.content AS o_content, o.url AS o_url,
        n.entity_id AS n_entity, n.platform AS n_platform, n.kind AS n_kind, n.metadata->>'kind' AS n_meta,
        n.content AS n_content, n.url AS n_url,
        o.entity_id IS DISTINCT FROM n.entity_id OR o.platform IS DISTINCT FROM n.platform AS moved,
        o.content IS DISTINCT FROM n.content AS text_changed
      FROM "old_rows" o JOIN "new_rows" n ON n.id = o.id
      WHERE o.entity_id IS DISTINCT FROM n.entity_id OR o.platform IS DISTINCT FROM n.platform
         OR o.kind IS DISTINCT FROM n.kind OR (o.metadata->>'kind') IS DISTINCT FROM (n.metadata->>'kind')
         OR o.url IS DISTINCT FROM n.url OR o.content IS DISTINCT FROM n.content
      -- Kept a subquery of its own (not flattened), so each flag above is computed once a row.
      OFFSET 0
    ) f
  ) c
  CROSS JOIN LATERAL (VALUES
    (-1, c.o_entity, c.o_platform, c.o_kind, c.o_meta, c.o_text, c.o_url),
    (1, c.n_entity, c.n_platform, c.n_kind, c.n_meta, c.n_text, c.n_url)
  ) s(sign, entity_id, platform, kind, meta_kind, has_text, url)
  HAVING count(*) > 0;
  RETURN NULL;
END $$;

-- Units from none to some (or back) change with_enrichment for an original embedded without enriched_at.
CREATE OR REPLACE FUNCTION "content_count_deltas_units"(ids UUID[], added INTEGER[], removed INTEGER[]) RETURNS void
LANGUAGE sql AS $$
  INSERT INTO content_count_deltas (entity_id, platform, delta, with_units, with_enrichment)
  SELECT c.entity_id, c.platform, 0, sum(s.d)::int,
    coalesce(sum(s.d) FILTER (WHERE e.enriched_at IS NULL AND coalesce(cardinality(e.embedding), 0) > 0), 0)::int
  FROM unnest(ids, added, removed) AS t(id, added, removed)
  JOIN content_store c ON c.id = t.id
  LEFT JOIN content_enrichment e ON e.content_id = t.id
  CROSS JOIN LATERAL (SELECT count(*)::int AS n FROM opinion_units u WHERE u.content_id = t.id) now
  CROSS JOIN LATERAL (SELECT (now.n > 0)::int - ((now.n - t.added + t.removed) > 0)::int AS d) s
  WHERE s.d <> 0
  GROUP BY c.entity_id, c.platform
$$;
CREATE OR REPLACE FUNCTION "content_count_deltas_units_truncated"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO content_count_deltas (entity_id, platform, delta, with_units, with_enrichment)
  SELECT d.entity_id, d.platform, 0, -sum(d.with_units)::int, -sum(d.with_enrichment)::int FROM content_count_deltas d
  GROUP BY d.entity_id, d.platform HAVING sum(d.with_units) <> 0 OR sum(d.with_enrichment) <> 0;
  INSERT INTO content_count_deltas (entity_id, platform, delta, with_enrichment)
  SELECT e.entity_id, e.platform, 0, count(*)::int FROM content_enrichment e
  WHERE coalesce(cardinality(e.embedding), 0) > 0 AND e.enriched_at IS NOT NULL
  GROUP BY e.entity_id, e.platform;
  RETURN NULL;
END $$;

DROP INDEX "content_store_entity_kind_sure_idx";
ALTER TABLE "content_store"
  DROP COLUMN "embedding",
  DROP COLUMN "embedding_model",
  DROP COLUMN "enriched_at",
  DROP COLUMN "feedback_kind",
  DROP COLUMN "feedback_kind_confidence";
