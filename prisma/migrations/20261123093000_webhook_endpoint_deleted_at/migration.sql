-- Deleting a webhook endpoint keeps its row (and delivery history) with deleted_at set, so a repeated
-- DELETE answers as the first one did; the sealed secret is cleared at deletion.
ALTER TABLE "webhook_endpoints" ADD COLUMN "deleted_at" TIMESTAMPTZ(3);
