-- Opinion units also say when they describe a defect (bug) or ask something (question); each stored
-- original gets the kind of feedback it is, written by enrichment (null until then).
ALTER TABLE "opinion_units" DROP CONSTRAINT "opinion_units_kind_check";
ALTER TABLE "opinion_units" ADD CONSTRAINT "opinion_units_kind_check" CHECK ("kind" IN ('opinion', 'request', 'bug', 'question'));

ALTER TABLE "content_store" ADD COLUMN "feedback_kind" TEXT;
ALTER TABLE "content_store" ADD CONSTRAINT "content_store_feedback_kind_check"
  CHECK ("feedback_kind" IN ('bug_report', 'feature_request', 'question', 'praise', 'complaint', 'other'));

-- A unit that compares the product with another names it; one that says the author leaves is churn.
ALTER TABLE "opinion_units" ADD COLUMN "compared_with" TEXT;
ALTER TABLE "opinion_units" ADD COLUMN "churn" BOOLEAN NOT NULL DEFAULT false;
