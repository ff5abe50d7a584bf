import { z } from "zod";

/**
 * The collection plan of an entity (`GET /agent/v1/ingest/collection-plan`): its saved scope
 * and one task per platform and target for an agent that collects with its own tools.
 * Reading a plan starts nothing.
 */
export const CollectionPlanQuery = z.object({ entity_id: z.string().min(1).max(100) });

const EntityRef = z.object({
  id: z.string(),
  kind: z.string(),
  name: z.string(),
  url: z.string(),
  keywords: z.array(z.string()),
  platforms: z.array(z.string()),
  collection_targets: z.record(z.string(), z.unknown()),
});

const Basis = z.enum(["entity", "company", "skills", "default", "none"]);

const LastCoverage = z.object({
  coverage_state: z.string(),
  run_id: z.string(),
  collection_scope: z.string(),
  query: z.string().nullable(),
  started_at: z.string().nullable(),
  finished_at: z.string().nullable(),
  recorded_at: z.string(),
});

const LastTarget = z.object({
  target: z.string(),
  target_type: z.string(),
  status: z.string(),
  items_found: z.number().int(),
  items_stored: z.number().int(),
  cursor_start: z.string().nullable(),
  cursor_end: z.string().nullable(),
  reached_end: z.boolean().nullable(),
  error: z.string().nullable(),
});

export const PlanTask = z.object({
  task_id: z.string(),
  platform: z.string(),
  target: z.string(),
  target_type: z.enum(["search_query", "url", "account"]),
  query: z.string(),
  window: z.object({ since: z.string(), until: z.string(), lookback_days: z.number().int() }),
  server_collector: z.boolean(),
  last_coverage: LastCoverage.nullable(),
  last_run: LastTarget.nullable(),
  resume_cursor: z.string().nullable(),
});
export type PlanTask = z.infer<typeof PlanTask>;

export const CollectionPlan = z.object({
  entity_id: z.string(),
  configuration_id: z.string(),
  subject: EntityRef,
  company: EntityRef.nullable(),
  products: z.array(EntityRef),
  competitors: z.array(EntityRef),
  scope: z.object({
    keywords: z.array(z.string()),
    platforms: z.array(z.string()),
    platforms_basis: Basis,
    collection_targets: z.record(z.string(), z.unknown()),
    lookback_days: z.number().int(),
    max_sources: z.number().int(),
    limits_basis: Basis,
    window: z.object({ since: z.string(), until: z.string() }),
  }),
  tasks: z.array(PlanTask),
  count: z.number().int(),
  starts_collection: z.literal(false),
  notes: z.array(z.string()),
  generated_at: z.string(),
});
export type CollectionPlan = z.infer<typeof CollectionPlan>;
