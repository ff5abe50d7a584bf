import { z } from "zod";
import { optional, pathId, queryInt, withDefault } from "../../platform/validation.js";

/**
 * Actions (`/api/sweeps/objects`, the agent client's `recall` mode `actions`): follow-up plans
 * derived from one revision of a finding (a knowledge record) of an entity. An action is a saved
 * plan, not an approved decision: nothing here approves or executes it.
 *
 * Glossary:
 * - finding: a knowledge record of the entity; its revision is immutable, and so is its evidence.
 * - object_type: what the action is about (the client's vocabulary).
 * - status: where the members are with it: open, acting, done, dismissed.
 */
export const OBJECT_TYPES = [
  "workflow",
  "pain_point",
  "feature_request",
  "frustration",
  "churn_risk",
  "research_opportunity",
  "competitor_hit",
  "trend",
  "narrative_gap",
  "hook",
] as const;
export const ACTION_STATUSES = ["open", "acting", "done", "dismissed"] as const;
export const URGENCIES = ["low", "medium", "high", "critical"] as const;
/** Statuses listed when the request names none: the ones still being worked on. */
export const DEFAULT_LISTED_STATUSES = ["open", "acting"] as const;

/** A JSON object; its serialised size is checked after validation (`checkPlanSize`), once nesting is known to be bounded. */
const ActionPlan = z.record(z.string(), z.unknown());
export const MAX_PLAN_CHARS = 20_000;
const Title = z.string().trim().min(1).max(300);
const Summary = z.string().max(4000);

export const ListActionsQuery = z.object({
  entity_id: z.string().min(1).max(100),
  limit: withDefault(queryInt(1, 200), 50),
  offset: withDefault(queryInt(0, 1_000_000), 0),
  object_type: optional(z.enum(OBJECT_TYPES)),
  status: optional(z.enum(ACTION_STATUSES)),
});
export type ListActionsQuery = z.output<typeof ListActionsQuery>;

export const CreateActionBody = z.object({
  entity_id: z.string().min(1).max(100),
  insight_id: z.string().min(1).max(100),
  insight_revision: optional(z.number().int().min(1).max(1_000_000)),
  object_type: z.enum(OBJECT_TYPES),
  title: optional(Title),
  summary: optional(Summary),
  status: withDefault(z.enum(ACTION_STATUSES), "open"),
  urgency: optional(z.enum(URGENCIES)),
  action_plan: optional(ActionPlan),
});
export type CreateActionInput = z.output<typeof CreateActionBody>;

export const UpdateActionBody = z
  .object({
    status: optional(z.enum(ACTION_STATUSES)),
    urgency: optional(z.enum(URGENCIES)),
    title: optional(Title),
    summary: optional(Summary),
    action_plan: optional(ActionPlan),
    expected_revision: optional(z.number().int().min(1).max(1_000_000)),
  })
  .superRefine((v, ctx) => {
    if ([v.status, v.urgency, v.title, v.summary, v.action_plan].every((f) => f === undefined)) {
      ctx.addIssue({ code: "custom", path: [], message: "Send at least one of status, urgency, title, summary or action_plan" });
    }
  });
export type UpdateActionInput = z.output<typeof UpdateActionBody>;

export const ActionParams = z.object({ object_id: pathId("Action") });

export const ActionEvidence = z.object({
  position: z.number().int(),
  content_id: z.string(),
  source_revision_id: z.string(),
  quote: z.string(),
  start: z.number().int(),
  end: z.number().int(),
  relation: z.string(),
  available: z.boolean(),
  platform: z.string().nullable(),
  url: z.string().nullable(),
  author: z.string().nullable(),
  published_at: z.string().nullable(),
});

export const ActionRecord = z.object({
  id: z.string(),
  entity_id: z.string(),
  object_type: z.enum(OBJECT_TYPES),
  title: z.string(),
  summary: z.string(),
  status: z.enum(ACTION_STATUSES),
  urgency: z.enum(URGENCIES).nullable(),
  impact_score: z.null(),
  signal_count: z.number().int(),
  evidence: z.array(ActionEvidence),
  knowledge_ref: z.object({ insight_id: z.string(), revision: z.number().int(), current_revision: z.number().int(), title: z.string() }),
  payload: z.object({ action_plan: z.record(z.string(), z.unknown()).nullable() }),
  revision: z.number().int(),
  created_by: z.string(),
  updated_by: z.string(),
  created_at: z.string(),
  updated_at: z.string(),
  last_seen_at: z.string(),
});
export type ActionRecord = z.infer<typeof ActionRecord>;

export const ACTION_BASIS =
  "Actions are saved plans derived from findings, not approved decisions; signal_count counts the distinct originals the finding cites, not people.";

/** The paging fields of a list answer: the page's count, the total, the window, where the next page starts, and what the list rests on. */
export const PAGE_FIELDS = {
  count: z.number().int(),
  total: z.number().int(),
  limit: z.number().int(),
  offset: z.number().int(),
  next_offset: z.number().int().nullable(),
  basis: z.string(),
};

export const ActionList = z.object({
  entity_id: z.string(),
  mode: z.literal("actions"),
  object_types: z.array(z.string()),
  statuses: z.array(z.string()),
  objects: z.array(ActionRecord),
  ...PAGE_FIELDS,
});
