import { z } from "zod";
import { optional, pathId, queryInt, withDefault } from "../../platform/validation.js";
import { refuseBothScopes } from "./scope.js";

/**
 * Knowledge records: the request and answer shapes, matching the agent client
 * (`@crowdlisten/harness`: recall modes knowledge, knowledge_context, knowledge_changes,
 * knowledge_source; ingest destination insight).
 */
export const RELATIONS = ["supports", "contradicts", "context"] as const;
export type Relation = (typeof RELATIONS)[number];
export const ORIGINS = ["agent", "generated"] as const;
export type Origin = (typeof ORIGINS)[number];

/** Bounds of the contract. */
export const LIMITS = {
  page: 100,
  citations: 20,
  quoteChars: 4000,
  sourceChars: 200_000,
  contextMinChars: 500,
  contextMaxChars: 50_000,
  contextDefaultChars: 16_000,
} as const;

const ScopeId = z.string().min(1).max(100);
const scopeFields = { entity_id: optional(ScopeId), project_id: optional(ScopeId) };

export const EvidenceInput = z
  .object({
    content_id: optional(z.string().min(1).max(100)),
    source_revision_id: optional(z.string().min(1).max(100)),
    quote: z.string().min(1).max(LIMITS.quoteChars),
    relation: withDefault(z.enum(RELATIONS), "supports"),
    start: optional(z.number().int().min(0).max(LIMITS.sourceChars)),
  })
  .superRefine((value, ctx) => {
    if (value.content_id === undefined && value.source_revision_id === undefined) {
      ctx.addIssue({ code: "custom", path: ["content_id"], message: "Give content_id or source_revision_id" });
    }
  });
export type EvidenceInput = z.output<typeof EvidenceInput>;

const Tags = z
  .array(z.string().trim().min(1).max(100))
  .max(50)
  .transform((tags) => [...new Set(tags)]);

/** A complete desired record; optional fields left out reset to empty. */
const writeFields = {
  ...scopeFields,
  request_id: z.string().min(8).max(128),
  title: z.string().trim().min(1).max(500),
  summary: z.string().min(1).max(16_000),
  reasoning: withDefault(z.string().max(16_000), ""),
  limitations: withDefault(z.array(z.string().min(1).max(2000)).max(30), []),
  tags: withDefault(Tags, []),
  evidence: z.array(EvidenceInput).min(1).max(LIMITS.citations),
  client_label: optional(z.string().max(80)),
};

/** Create: expected_revision is 0. */
export const CreateInsightBody = z.object({ ...writeFields, expected_revision: z.literal(0) }).superRefine(refuseBothScopes);

/** Revise: expected_revision is the revision last read. */
export const ReviseInsightBody = z
  .object({ ...writeFields, expected_revision: z.number().int().min(0).max(2_147_483_647) })
  .superRefine(refuseBothScopes);
export type WriteInsightInput = z.output<typeof ReviseInsightBody>;

export const ScopeQuery = z.object(scopeFields).superRefine(refuseBothScopes);

const QueryBool = z.enum(["true", "false"]).transform((v) => v === "true");

export const ListQuery = z
  .object({
    ...scopeFields,
    query: optional(z.string().max(500)),
    tag: optional(z.string().max(100)),
    sort: withDefault(z.enum(["updated_at", "created_at", "title"]), "updated_at"),
    order: withDefault(z.enum(["asc", "desc"]), "desc"),
    limit: withDefault(queryInt(1, LIMITS.page), 20),
    offset: withDefault(queryInt(0, 1_000_000_000), 0),
  })
  .superRefine(refuseBothScopes);
export type ListQuery = z.output<typeof ListQuery>;

export const ReadQuery = z
  .object({
    ...scopeFields,
    revision: optional(queryInt(1, 2_147_483_647)),
    include_evidence: withDefault(QueryBool, true),
  })
  .superRefine(refuseBothScopes);

export const ChangesQuery = z
  .object({
    ...scopeFields,
    after: withDefault(z.string().regex(/^[0-9]{1,18}$/), "0"),
    limit: withDefault(queryInt(1, LIMITS.page), 50),
  })
  .superRefine(refuseBothScopes);

export const ContextQuery = z
  .object({
    ...scopeFields,
    max_chars: withDefault(queryInt(LIMITS.contextMinChars, LIMITS.contextMaxChars), LIMITS.contextDefaultChars),
    limit: withDefault(queryInt(1, LIMITS.page), 20),
    offset: withDefault(queryInt(0, 1_000_000_000), 0),
  })
  .superRefine(refuseBothScopes);

export const ContentListQuery = z
  .object({
    ...scopeFields,
    limit: withDefault(queryInt(1, LIMITS.page), 50),
    offset: withDefault(queryInt(0, 1_000_000_000), 0),
  })
  .superRefine(refuseBothScopes);

export const InsightParams = z.object({ insight_id: pathId("Insight") });
export const ContentParams = z.object({ content_id: pathId("Content") });
export const SourceParams = z.object({ source_revision_id: pathId("Source revision") });

// ── answers ────────────────────────────────────────────────────────────────

export const EvidenceRecord = z.object({
  source_revision_id: z.uuid(),
  content_id: z.uuid(),
  quote: z.string(),
  relation: z.enum(RELATIONS),
  start: z.number().int(),
  end: z.number().int(),
});
export type EvidenceRecord = z.infer<typeof EvidenceRecord>;

export const InsightRecord = z.object({
  id: z.uuid(),
  entity_id: z.uuid().nullable(),
  project_id: z.uuid().nullable(),
  revision: z.number().int(),
  title: z.string(),
  summary: z.string(),
  reasoning: z.string(),
  limitations: z.array(z.string()),
  tags: z.array(z.string()),
  evidence: z.array(EvidenceRecord),
  origin: z.enum(ORIGINS),
  actor_id: z.uuid(),
  client_label: z.string().nullable(),
  review_state: z.string(),
  analysis_id: z.uuid().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type InsightRecord = z.infer<typeof InsightRecord>;

export const Receipt = z.object({
  saved: z.boolean(),
  replayed: z.boolean(),
  change_seq: z.string(),
  record: InsightRecord,
});
export type Receipt = z.infer<typeof Receipt>;

export const InsightSummary = InsightRecord.omit({ evidence: true }).extend({ evidence_count: z.number().int() });
export type InsightSummary = z.infer<typeof InsightSummary>;

export const InsightList = z.object({
  insights: z.array(InsightSummary),
  count: z.number().int(),
  total: z.number().int(),
  limit: z.number().int(),
  offset: z.number().int(),
  next_offset: z.number().int().nullable(),
});

export const SourceSummary = z.object({
  source_revision_id: z.uuid(),
  content_id: z.uuid(),
  available: z.boolean(),
  text_kind: z.enum(["original", "interpretation"]),
  allowed_relations: z.array(z.enum(RELATIONS)),
  kind: z.string(),
  platform: z.string(),
  url: z.string(),
  title: z.string(),
  author: z.string(),
  published_at: z.string().nullable(),
  text_length: z.number().int(),
  captured_at: z.string(),
  removed_at: z.string().nullable(),
  /** Why the original was removed: `deleted` (DELETE /agent/v1/content/{content_id}), `author_erased`, `retention` or `workspace_deleted`; null while it exists. */
  removed_reason: z.string().nullable().optional(),
});
export type SourceSummary = z.infer<typeof SourceSummary>;

export const SourceRecord = SourceSummary.extend({ entity_id: z.uuid(), text: z.string().nullable() });
export type SourceRecord = z.infer<typeof SourceRecord>;

export const ResolvedEvidence = EvidenceRecord.extend({
  position: z.number().int(),
  available: z.boolean(),
  source_text_kind: z.enum(["original", "interpretation"]),
  allowed_relations: z.array(z.enum(RELATIONS)),
  span: z.object({ start: z.number().int(), end: z.number().int(), text: z.string() }).nullable(),
  /** Present when the cited original is gone: why (`deleted`, `author_erased`, `retention`, `workspace_deleted`) and when; the quote is then empty. */
  unavailable: z.object({ reason: z.string(), at: z.string().nullable() }).optional(),
});
export type ResolvedEvidence = z.infer<typeof ResolvedEvidence>;

export const InsightRead = z.object({
  record: InsightRecord,
  current_revision: z.number().int(),
  sources: z.array(SourceSummary).optional(),
  resolved_evidence: z.array(ResolvedEvidence).optional(),
  unavailable_source_ids: z.array(z.uuid()),
});

export const ChangeEvent = z.object({
  seq: z.string(),
  insight_id: z.uuid(),
  revision: z.number().int(),
  kind: z
    .enum(["created", "revised", "deleted"])
    .describe("`deleted`: the record was deleted (title empty); earlier events keep their numbers"),
  origin: z.enum(ORIGINS),
  actor_id: z.uuid(),
  title: z.string(),
  recorded_at: z.string(),
});
export type ChangeEvent = z.infer<typeof ChangeEvent>;

export const ChangeFeed = z.object({
  entity_id: z.uuid().nullable(),
  project_id: z.uuid().nullable(),
  events: z.array(ChangeEvent),
  after: z.string(),
  next_after: z.string(),
  has_more: z.boolean(),
});

export const ContextAnswer = z.object({
  entity_id: z.uuid().nullable(),
  project_id: z.uuid().nullable(),
  markdown: z.string(),
  records: z.array(z.object({ id: z.uuid(), revision: z.number().int(), included: z.boolean(), chars: z.number().int() })),
  omitted_insight_ids: z.array(z.uuid()),
  unavailable_source_revision_ids: z.array(z.uuid()),
  unresolved_evidence: z.array(
    z.object({
      insight_id: z.uuid(),
      revision: z.number().int(),
      source_revision_id: z.uuid(),
      content_id: z.uuid(),
      relation: z.enum(RELATIONS),
    }),
  ),
  next_offset: z.number().int().nullable(),
  bounds: z.object({ max_chars: z.number().int(), chars: z.number().int(), limit: z.number().int(), offset: z.number().int() }),
  record_reader: z.string(),
  complete: z.boolean(),
});

export const ContentSummary = z.object({
  content_id: z.uuid(),
  entity_id: z.uuid(),
  parent_id: z.uuid().nullable(),
  kind: z.string(),
  platform: z.string(),
  title: z.string(),
  url: z.string(),
  author: z.string(),
  published_at: z.string().nullable(),
  created_at: z.string(),
  text_length: z.number().int(),
  text_kind: z.enum(["original", "interpretation"]),
  allowed_relations: z.array(z.enum(RELATIONS)),
});
export type ContentSummary = z.infer<typeof ContentSummary>;

export const ContentList = z.object({
  content: z.array(ContentSummary),
  count: z.number().int(),
  total: z.number().int(),
  limit: z.number().int(),
  offset: z.number().int(),
  next_offset: z.number().int().nullable(),
});

export const ContentRecord = ContentSummary.extend({
  text: z.string(),
  metadata: z.unknown(),
  engagement: z.unknown(),
});
