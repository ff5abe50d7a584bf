-- Opinion units are clauses: each has a kind (an opinion, or a request for something the
-- product lacks), every aspect it names (best first), and the version of the analyser that
-- wrote it, so units written by an older analyser are recomputed when analysed.
ALTER TABLE "opinion_units" ADD COLUMN "kind" TEXT NOT NULL DEFAULT 'opinion';
ALTER TABLE "opinion_units" ADD COLUMN "terms" TEXT[] DEFAULT ARRAY[]::TEXT[];
ALTER TABLE "opinion_units" ADD COLUMN "analyser_version" SMALLINT NOT NULL DEFAULT 1;
ALTER TABLE "opinion_units" ADD CONSTRAINT "opinion_units_kind_check" CHECK ("kind" IN ('opinion', 'request'));
