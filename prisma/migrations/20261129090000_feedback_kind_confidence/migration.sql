-- How sure enrichment is of an original's feedback kind: the feedback-kind model's probability of
-- the class the kind came from (bug, feature, question; "other" for praise, complaint and other),
-- 0–1, null until enriched or for rows enriched before this column. A focused question ("What bugs
-- do users report most?") quotes the sources most clearly of the asked kind first.
ALTER TABLE "content_store" ADD COLUMN "feedback_kind_confidence" REAL;
ALTER TABLE "content_store" ADD CONSTRAINT "content_store_feedback_kind_confidence_check"
  CHECK ("feedback_kind_confidence" BETWEEN 0 AND 1);
