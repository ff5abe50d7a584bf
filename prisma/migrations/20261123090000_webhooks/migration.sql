-- Outbound webhooks (Standard Webhooks): a workspace's endpoints and one delivery per endpoint and
-- message. The signing secret is stored sealed (AES-256-GCM under SECRETS_KEY, bound to the
-- endpoint id), never in clear. A message id derives from the event (kind, job id, state), so
-- recording the same event twice finds the first delivery instead of adding a second.
-- The body is kept as the exact bytes that are signed and sent, so every attempt carries the same body.
CREATE TABLE "webhook_endpoints" (
    "id" UUID NOT NULL,
    "workspace_id" UUID NOT NULL,
    "url" TEXT NOT NULL,
    "description" TEXT,
    "event_types" TEXT[] NOT NULL DEFAULT ARRAY[]::TEXT[],
    "secret_sealed" TEXT NOT NULL,
    "created_by" UUID,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "webhook_endpoints_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "webhook_endpoints_workspace_created_idx" ON "webhook_endpoints"("workspace_id", "created_at", "id");
ALTER TABLE "webhook_endpoints" ADD CONSTRAINT "webhook_endpoints_workspace_id_fkey" FOREIGN KEY ("workspace_id") REFERENCES "workspaces"("id") ON DELETE CASCADE ON UPDATE CASCADE;

CREATE TABLE "webhook_deliveries" (
    "id" UUID NOT NULL,
    "endpoint_id" UUID NOT NULL,
    "message_id" TEXT NOT NULL,
    "event_type" TEXT NOT NULL,
    "body" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'pending',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "last_status_code" INTEGER,
    "last_error" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "last_attempt_at" TIMESTAMPTZ(3),
    "next_attempt_at" TIMESTAMPTZ(3),
    "delivered_at" TIMESTAMPTZ(3),
    CONSTRAINT "webhook_deliveries_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "webhook_deliveries_status_check" CHECK ("status" IN ('pending', 'retrying', 'succeeded', 'failed'))
);
CREATE UNIQUE INDEX "webhook_deliveries_endpoint_id_message_id_key" ON "webhook_deliveries"("endpoint_id", "message_id");
CREATE INDEX "webhook_deliveries_endpoint_created_idx" ON "webhook_deliveries"("endpoint_id", "created_at", "id");
CREATE INDEX "webhook_deliveries_open_idx" ON "webhook_deliveries"("updated_at") WHERE "status" IN ('pending', 'retrying');
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_endpoint_id_fkey" FOREIGN KEY ("endpoint_id") REFERENCES "webhook_endpoints"("id") ON DELETE CASCADE ON UPDATE CASCADE;
