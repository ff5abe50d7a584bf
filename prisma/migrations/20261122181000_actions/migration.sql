-- Actions (GET/POST/PATCH /api/sweeps/objects): follow-up plans derived from one revision of a
-- knowledge record (a finding) of an entity. An action is a saved plan, not an approved decision.
-- Its evidence is the finding revision's (immutable), resolved when read. One action per finding
-- revision and object type, so a retried create finds the first.
CREATE TABLE "actions" (
    "id" UUID NOT NULL,
    "workspace_id" UUID NOT NULL,
    "entity_id" UUID NOT NULL,
    "insight_id" UUID NOT NULL,
    "insight_revision" INTEGER NOT NULL,
    "object_type" TEXT NOT NULL,
    "title" TEXT NOT NULL,
    "summary" TEXT NOT NULL DEFAULT '',
    "status" TEXT NOT NULL DEFAULT 'open',
    "urgency" TEXT,
    "action_plan" JSONB,
    "revision" INTEGER NOT NULL DEFAULT 1,
    "created_by" UUID NOT NULL,
    "updated_by" UUID NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "actions_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "actions_status_check" CHECK ("status" IN ('open', 'acting', 'done', 'dismissed')),
    CONSTRAINT "actions_urgency_check" CHECK ("urgency" IS NULL OR "urgency" IN ('low', 'medium', 'high', 'critical')),
    CONSTRAINT "actions_object_type_check" CHECK ("object_type" IN ('workflow', 'pain_point', 'feature_request', 'frustration',
      'churn_risk', 'research_opportunity', 'competitor_hit', 'trend', 'narrative_gap', 'hook'))
);
CREATE UNIQUE INDEX "actions_finding_type_key" ON "actions"("entity_id", "insight_id", "insight_revision", "object_type");
CREATE INDEX "actions_entity_created_idx" ON "actions"("entity_id", "created_at", "id");
ALTER TABLE "actions" ADD CONSTRAINT "actions_entity_id_fkey" FOREIGN KEY ("entity_id") REFERENCES "entities"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "actions" ADD CONSTRAINT "actions_insight_revision_fkey" FOREIGN KEY ("insight_id", "insight_revision") REFERENCES "knowledge_insight_revisions"("insight_id", "revision") ON DELETE CASCADE ON UPDATE CASCADE;
