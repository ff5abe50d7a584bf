-- The circuit breaker of a webhook endpoint (src/webhooks/breaker.ts). `enabled`: deliveries are
-- attempted. `paused`: after WEBHOOK_PAUSE_AFTER_FAILURES failed attempts in a row, nothing is attempted
-- until paused_until. `disabled`: after WEBHOOK_DISABLE_AFTER_FAILURES, nothing is sent and no delivery is
-- recorded until an admin enables it again. consecutive_failures counts failed attempts since the last success.
ALTER TABLE "webhook_endpoints" ADD COLUMN "state" TEXT NOT NULL DEFAULT 'enabled';
ALTER TABLE "webhook_endpoints" ADD COLUMN "consecutive_failures" INTEGER NOT NULL DEFAULT 0;
ALTER TABLE "webhook_endpoints" ADD COLUMN "paused_until" TIMESTAMPTZ(3);
ALTER TABLE "webhook_endpoints" ADD COLUMN "disabled_at" TIMESTAMPTZ(3);
ALTER TABLE "webhook_endpoints" ADD COLUMN "disabled_reason" TEXT;
ALTER TABLE "webhook_endpoints" ADD CONSTRAINT "webhook_endpoints_state_check" CHECK (
    "state" IN ('enabled', 'paused', 'disabled')
    AND ("state" = 'paused') = ("paused_until" IS NOT NULL)
    AND ("state" = 'disabled') = ("disabled_at" IS NOT NULL)
);
