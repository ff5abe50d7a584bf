import { z } from "zod";
import { linkUrl } from "../../platform/links.js";
import { codePointLength } from "../../platform/text.js";
import { optional, withDefault } from "../../platform/validation.js";
import { PLATFORMS } from "../../platform/vocabulary.js";

/**
 * Onboarding request and answer. Bounds the spec leaves open are decided here and
 * documented in docs/api.md ("Onboarding"): names 1–200, keywords ≤ 16 per object
 * (each 1–200), URLs http(s) ≤ 2000 (an empty string reads as "no URL"), free-form
 * `collection_targets` ≤ 20 000 characters of JSON, objective texts ≤ 4000.
 */

export const SOURCE_INTENTS = ["Cursor", "Claude Code", "Codex", "OpenClaw"] as const;
export const COLLECTION_MODES = ["agent", "server"] as const;

export const MAX_KEYWORDS = 16;
export const MAX_PRODUCTS = 20;
export const MAX_COMPETITORS = 20;
export const MAX_OBJECTIVES = 5;

const text = (max: number) => z.string().max(max);
const name = z.string().trim().min(1).max(200);

/** An http(s) URL with a host; "" (or null/absent) means none. */
const url = withDefault(linkUrl({ max: 2000, trim: true }), "");

const uniqueList = <T extends z.ZodType>(item: T, max: number) =>
  withDefault(z.array(item).max(max), []).transform((list) => [...new Set(list)] as z.output<T>[]);

const keywords = uniqueList(z.string().trim().min(1).max(200), MAX_KEYWORDS);
const platforms = uniqueList(z.enum(PLATFORMS), PLATFORMS.length);

const collectionTargets = withDefault(
  z.record(z.string(), z.unknown()).refine((value) => codePointLength(JSON.stringify(value)) <= 20_000, {
    message: "collection_targets should be at most 20000 characters of JSON",
    params: { type: "value_error" },
  }),
  {},
);

export const CompanyInput = z.object({
  name,
  url,
  keywords,
  collection_targets: collectionTargets,
  platforms,
});

export const RelatedEntityInput = z.object({
  name,
  url,
  keywords,
  collection_targets: collectionTargets,
});

// The workflow skeleton: every object may be sent partially; what is missing takes
// the spec's skeleton value.
const ModelRouting = z.object({
  cost_tier: withDefault(z.string().trim().min(1).max(50), "medium"),
  allowed_models: uniqueList(z.string().trim().min(1).max(200), 16),
});

const SlackChannel = z.object({
  team_id: withDefault(text(100), ""),
  channel_id: withDefault(text(100), ""),
  name: withDefault(text(200), ""),
});

const WorkflowInputs = z.object({
  platforms,
  account_roles: uniqueList(z.string().trim().min(1).max(100), 16),
  slack_channels: withDefault(z.array(SlackChannel).max(50), []),
  lookback_days: withDefault(z.number().int().min(1).max(3650), 7),
  max_sources: withDefault(z.number().int().min(1).max(500), 25),
  x_queries: uniqueList(z.string().trim().min(1).max(500), 16),
  x_min_likes: withDefault(z.number().int().min(0).max(1_000_000_000), 500_000),
  // A language filter for X collection (the reference client's ISO 639-1 codes); none when absent.
  x_language: optional(z.string().trim().min(2).max(10)),
});

const emptyObject = {} as Record<string, never>;

export const WorkflowInput = z.object({
  version: withDefault(z.number().int().min(1).max(1000), 1),
  instructions: withDefault(text(20_000), ""),
  model_routing: withDefault(ModelRouting, ModelRouting.parse(emptyObject)),
  filter_relevance: withDefault(z.boolean(), true),
  // The hosted synthesis model the reference client may choose; kept as sent, none when absent.
  synthesis_model: optional(z.string().trim().min(1).max(100)),
  document_destination: withDefault(z.object({ url }), { url: "" }),
  inputs: withDefault(WorkflowInputs, WorkflowInputs.parse(emptyObject)),
});
export type Workflow = z.output<typeof WorkflowInput>;

/** The workflow every research objective gets when it sends none. */
export const SKELETON_WORKFLOW: Workflow = WorkflowInput.parse(emptyObject);

/**
 * A research objective's (and so its skill's) id: the caller's own ("launch-review"), 1–100 characters
 * without control characters (surrounding spaces are trimmed). Unique within an entity and stable across edits.
 */
export const ObjectiveId = z
  .string()
  .trim()
  .min(1)
  .max(100)
  .regex(/^\P{Cc}+$/u, "an id has no control characters");

export const ObjectiveInput = z.object({
  id: optional(ObjectiveId),
  title: z.string().trim().min(1).max(300),
  question: withDefault(text(4000), ""),
  decision: withDefault(text(4000), ""),
  evidence: withDefault(text(4000), ""),
  workflow: withDefault(WorkflowInput, SKELETON_WORKFLOW),
});

export const OnboardingBody = z
  .object({
    company: CompanyInput,
    research_objectives: withDefault(z.array(ObjectiveInput).max(MAX_OBJECTIVES), []),
    request_id: optional(z.uuid()),
    workspace_id: optional(z.uuid()),
    source_intent: uniqueList(z.enum(SOURCE_INTENTS), SOURCE_INTENTS.length),
    collection_mode: withDefault(z.enum(COLLECTION_MODES), "server"),
    products: withDefault(z.array(RelatedEntityInput).max(MAX_PRODUCTS), []),
    competitors: withDefault(z.array(RelatedEntityInput).max(MAX_COMPETITORS), []),
  })
  .superRefine((body, ctx) => {
    const seen = new Set<string>();
    body.research_objectives.forEach((objective, index) => {
      if (objective.id === undefined) return;
      if (seen.has(objective.id)) {
        ctx.addIssue({
          code: "custom",
          path: ["research_objectives", index, "id"],
          message: "Research objective ids must be unique within a request",
          params: { type: "value_error" },
        });
      }
      seen.add(objective.id);
    });
  });
export type OnboardingInput = z.output<typeof OnboardingBody>;

const EntityRef = z.object({ id: z.uuid(), name: z.string(), kind: z.string(), url: z.string() });

export const OnboardingResponse = z.object({
  status: z.literal("created"),
  request_id: z.uuid(),
  workspace_id: z.uuid(),
  workspace_created: z.boolean(),
  project_id: z.uuid(),
  collection_mode: z.enum(COLLECTION_MODES),
  source_intent: z.array(z.enum(SOURCE_INTENTS)),
  company: EntityRef,
  products: z.array(EntityRef),
  competitors: z.array(EntityRef),
  entity_ids: z.array(z.uuid()),
  research_objectives: z.array(
    z.object({
      skill_id: z.string(),
      objective_id: z.string(),
      title: z.string(),
      entity_id: z.uuid(),
      skill_url: z.string(),
    }),
  ),
  next: z.object({
    entity: z.string(),
    entities: z.string(),
    skills: z.string(),
    connection: z.string(),
    ingest_content: z.string(),
    ingest_coverage: z.string(),
    collection_jobs: z.string(),
    meetingnotes_sync: z.string(),
    analysis_run: z.string(),
  }),
});
export type OnboardingResponse = z.infer<typeof OnboardingResponse>;
