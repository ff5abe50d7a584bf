-- The audit's count deltas on an update (migration 20261130100000) read, for every changed row, both
-- versions' text against a pattern and probed the row's units, though a row that keeps its entity and
-- platform contributes nothing through flags that are the same before and after. Enrichment's update (a
-- chunk's embeddings, enriched_at and feedback kind) is such a write: its rows keep entity, platform and
-- text, and both versions' "embedding and either units or enriched_at" do not depend on the units (the old
-- version has no embedding or is already enriched; the new one is enriched). So the text flags are read
-- only for a row that moved or whose text changed, and the units only for a row that moved or has, before
-- or after, an embedding without enriched_at; otherwise both sides read false and cancel as before. The
-- sums written are the same; the update of a 200-row chunk costs about 5 ms less (21 → 16 ms).
CREATE OR REPLACE FUNCTION "content_count_deltas_updated"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM content_count_deltas_add(array_agg(s.sign), array_agg(s.entity_id), array_agg(s.platform),
    array_agg(s.kind <> 'summary' AND coalesce(s.meta_kind, '') <> 'meeting_note'), array_agg(s.kind = 'comment'),
    array_agg(s.has_text), array_agg(s.url <> ''), array_agg(s.embedded), array_agg(c.units), array_agg(s.enriched))
  FROM (
    SELECT f.*,
      CASE WHEN f.moved OR f.text_changed THEN f.o_content ~ '[^[:space:]]' ELSE false END AS o_text,
      CASE WHEN f.moved OR f.text_changed THEN f.n_content ~ '[^[:space:]]' ELSE false END AS n_text,
      CASE WHEN f.moved OR (f.o_embedded AND NOT f.o_enriched) OR (f.n_embedded AND NOT f.n_enriched)
        THEN EXISTS (SELECT 1 FROM opinion_units u WHERE u.content_id = f.id) ELSE false END AS units
    FROM (
      SELECT o.id, o.entity_id AS o_entity, o.platform AS o_platform, o.kind AS o_kind, o.metadata->>'kind' AS o_meta,
        o.content AS o_content, o.url AS o_url, coalesce(cardinality(o.embedding), 0) > 0 AS o_embedded,
        o.enriched_at IS NOT NULL AS o_enriched,
        n.entity_id AS n_entity, n.platform AS n_platform, n.kind AS n_kind, n.metadata->>'kind' AS n_meta,
        n.content AS n_content, n.url AS n_url, coalesce(cardinality(n.embedding), 0) > 0 AS n_embedded,
        n.enriched_at IS NOT NULL AS n_enriched,
        o.entity_id IS DISTINCT FROM n.entity_id OR o.platform IS DISTINCT FROM n.platform AS moved,
        o.content IS DISTINCT FROM n.content AS text_changed
      FROM "old_rows" o JOIN "new_rows" n ON n.id = o.id
      WHERE o.entity_id IS DISTINCT FROM n.entity_id OR o.platform IS DISTINCT FROM n.platform
         OR o.kind IS DISTINCT FROM n.kind OR (o.metadata->>'kind') IS DISTINCT FROM (n.metadata->>'kind')
         OR o.url IS DISTINCT FROM n.url OR o.content IS DISTINCT FROM n.content
         OR coalesce(cardinality(o.embedding), 0) <> coalesce(cardinality(n.embedding), 0)
         OR (o.enriched_at IS NULL) <> (n.enriched_at IS NULL)
      -- Kept a subquery of its own (not flattened), so each flag above is computed once a row.
      OFFSET 0
    ) f
  ) c
  CROSS JOIN LATERAL (VALUES
    (-1, c.o_entity, c.o_platform, c.o_kind, c.o_meta, c.o_text, c.o_url, c.o_embedded, c.o_enriched),
    (1, c.n_entity, c.n_platform, c.n_kind, c.n_meta, c.n_text, c.n_url, c.n_embedded, c.n_enriched)
  ) s(sign, entity_id, platform, kind, meta_kind, has_text, url, embedded, enriched)
  HAVING count(*) > 0;
  RETURN NULL;
END $$;
