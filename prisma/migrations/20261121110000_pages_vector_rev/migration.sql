-- Saved pages: a change marker for vector ranking (src/context/vectors.ts keeps each
-- user's page vectors in memory and uses count + sum of vector_rev to notice changes).
-- Every insert takes the next value; an update that changes what vector ranking reads
-- (embedding, embedding_model, project_id) takes a new one, whoever writes it.
ALTER TABLE "pages" ADD COLUMN "vector_rev" BIGSERIAL NOT NULL;

CREATE INDEX "pages_user_id_vector_rev_id_idx" ON "pages"("user_id", "vector_rev", "id");

CREATE FUNCTION "pages_bump_vector_rev"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW."embedding" IS DISTINCT FROM OLD."embedding"
     OR NEW."embedding_model" IS DISTINCT FROM OLD."embedding_model"
     OR NEW."project_id" IS DISTINCT FROM OLD."project_id" THEN
    NEW."vector_rev" := nextval(pg_get_serial_sequence('"pages"', 'vector_rev'));
  END IF;
  RETURN NEW;
END
$$;

CREATE TRIGGER "pages_bump_vector_rev" BEFORE UPDATE ON "pages"
  FOR EACH ROW EXECUTE FUNCTION "pages_bump_vector_rev"();
