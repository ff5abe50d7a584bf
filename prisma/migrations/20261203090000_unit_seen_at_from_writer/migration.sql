-- A unit's `seen_at` (the day its roll-ups count it under) was looked up from its original by a row
-- trigger for every unit inserted: a statement per unit, about a sixth of an enrichment chunk's insert.
-- The enrichment locks the chunk's originals before it writes their units, so it reads their dates in
-- that statement and writes `seen_at` itself; the trigger now fills in only a unit written without one
-- (any other writer), and still recomputes it when a unit moves to another original.

-- When an original's units are dated: by the original (published, else stored), except summaries and
-- meeting notes, whose units count under no day.
CREATE FUNCTION "content_seen_at"(kind TEXT, metadata JSONB, published_at TIMESTAMPTZ, created_at TIMESTAMPTZ)
RETURNS TIMESTAMPTZ LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE WHEN kind <> 'summary' AND coalesce(metadata->>'kind', '') <> 'meeting_note'
              THEN coalesce(published_at, created_at) END
$$;

CREATE OR REPLACE FUNCTION "opinion_units_set_seen_at"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  SELECT content_seen_at(c.kind, c.metadata, c.published_at, c.created_at) INTO NEW.seen_at
    FROM content_store c WHERE c.id = NEW.content_id;
  RETURN NEW;
END $$;

DROP TRIGGER "opinion_units_set_seen_at" ON "opinion_units";
CREATE TRIGGER "opinion_units_set_seen_at" BEFORE INSERT ON "opinion_units"
  FOR EACH ROW WHEN (NEW.seen_at IS NULL) EXECUTE FUNCTION "opinion_units_set_seen_at"();
CREATE TRIGGER "opinion_units_moved_seen_at" BEFORE UPDATE OF "content_id" ON "opinion_units"
  FOR EACH ROW EXECUTE FUNCTION "opinion_units_set_seen_at"();
