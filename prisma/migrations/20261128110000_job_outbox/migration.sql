-- The job outbox (src/jobs/outbox.ts): a job whose row is written inside a larger transaction (a
-- workflow run reserving credits, a routine's occurrence) is staged here in that transaction and put
-- on the queue once it has committed, so a worker never receives a job whose row it cannot see yet,
-- and a queue entry lost between commit and enqueue is sent by the relay instead of waiting for an
-- operator. An entry is deleted once the queue holds its job.
CREATE TABLE "job_outbox" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "job_name" TEXT NOT NULL,
    "payload" JSONB NOT NULL,
    "job_id" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "last_error" TEXT,

    CONSTRAINT "job_outbox_pkey" PRIMARY KEY ("id")
);

CREATE INDEX "job_outbox_created_idx" ON "job_outbox"("created_at");
