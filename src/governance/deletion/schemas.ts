import { z } from "zod";
import { ROLES } from "../../platform/roles.js";
import { pathId } from "../../platform/validation.js";
import { Platform } from "../../platform/vocabulary.js";

/** Deleting stored originals and forgetting authors (docs/api.md, "Deleting stored originals"). */
export const ContentParams = z.object({ content_id: pathId("Content") });
export const WorkspaceParams = z.object({ workspace_id: pathId("Workspace") });
export const ErasureParams = z.object({ workspace_id: pathId("Workspace"), erasure_id: pathId("Erasure") });

export const Removed = z
  .object({
    rows: z.number().int().describe("Content rows deleted: the original and every comment below it"),
    originals: z.number().int(),
    comments: z.number().int(),
    opinion_units: z.number().int(),
    analyses_updated: z.number().int(),
    analysis_events_updated: z.number().int(),
    generated_text_rewritten: z
      .number()
      .int()
      .describe("Insights and generated knowledge revisions whose theme was named after words only the deleted originals used"),
    insight_evidence_cleared: z.number().int(),
    knowledge_snapshots_cleared: z.number().int(),
    knowledge_citations_cleared: z.number().int(),
    knowledge_receipts_updated: z.number().int(),
    meeting_summaries_deleted: z.number().int(),
    coverage_records_updated: z
      .number()
      .int()
      .describe("Coverage records of the runs that stored the rows, which now count them under removed_after"),
  })
  .describe("What the deletion removed or rewrote, by kind");

export const DeletionReceipt = z.object({
  content_id: z.uuid(),
  deleted: z.literal(true),
  reason: z.literal("deleted"),
  deleted_at: z.string(),
  entity_id: z.uuid(),
  kind: z.string(),
  platform: z.string(),
  removed: Removed,
});
export type DeletionReceipt = z.infer<typeof DeletionReceipt>;

/** Values the ingest stores when an item names no author: not anyone's handle. */
export const NOT_HANDLES = new Set(["", "unknown"]);

export const ErasureBody = z.object({
  platform: Platform,
  author: z
    .string()
    .min(1)
    .max(500)
    .refine((v) => !NOT_HANDLES.has(v.trim().toLowerCase()), "Input should be an author's handle (not blank, not 'unknown')"),
});
export type ErasureInput = z.output<typeof ErasureBody>;

export const ERASURE_STATUSES = ["running", "completed", "failed"] as const;

export const ErasureRecord = z.object({
  id: z.uuid(),
  workspace_id: z.uuid(),
  platform: z.string(),
  status: z.enum(ERASURE_STATUSES),
  requested_by: z.uuid().nullable(),
  progress: z.object({
    originals_matched: z.number().int().describe("The author's originals found when the erasure was recorded"),
    remaining: z.number().int().describe("Of those, still to delete"),
    rows_deleted: z.number().int().describe("Content rows deleted: the author's originals and every comment below them"),
    opinion_units_deleted: z.number().int(),
    analyses_updated: z.number().int(),
    knowledge_citations_cleared: z.number().int(),
    batches: z.number().int(),
  }),
  error: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
  finished_at: z.string().nullable(),
  next: z.string().describe("Where to read the erasure's progress"),
});
export type ErasureRecord = z.infer<typeof ErasureRecord>;

export const ErasureList = z.object({
  workspace_id: z.uuid(),
  erasures: z.array(ErasureRecord),
  count: z.number().int(),
});

/** Deleting a workspace and retention (docs/api.md, "Deleting a workspace" and "Retention"). */
export const WORKSPACE_STATES = ["active", "deleting"] as const;

export const WorkspaceState = z.object({
  id: z.uuid(),
  name: z.string(),
  personal: z.boolean(),
  role: z.enum(ROLES),
  created_at: z.string(),
  state: z.enum(WORKSPACE_STATES).describe("deleting: invisible to its members until its owner restores it or it is purged"),
  retention_days: z.number().int().nullable().describe("Days a stored original is kept (by its stored time); null: forever"),
  deletion: z
    .object({
      requested_at: z.string().nullable(),
      requested_by: z.uuid().nullable(),
      purge_after: z.string().describe("When the scheduled pass purges it; the owner may restore it until then"),
    })
    .nullable(),
});
export type WorkspaceState = z.infer<typeof WorkspaceState>;

export const RetentionDays = z.number().int().min(1).max(3650);
/** `retention_days` is required: null sets "keep forever" (it is not an absent optional field). */
export const WorkspaceSettingsBody = z.object({
  retention_days: RetentionDays.nullable().describe("1–3650 days, or null to keep originals forever"),
});
export type WorkspaceSettingsInput = z.output<typeof WorkspaceSettingsBody>;

export const RetentionReport = z.object({
  workspace_id: z.uuid(),
  retention_days: z.number().int().nullable(),
  last_pass_at: z.string().nullable().describe("When the last retention pass over this workspace finished"),
  last_cutoff: z.string().nullable().describe("Originals stored before this time were removed by the last pass"),
  removed_last_pass: z.number().int().describe("Content rows (originals and their comments) the last pass removed"),
  removed_total: z.number().int().describe("Content rows every retention pass removed in all"),
  passes: z.number().int(),
});
export type RetentionReport = z.infer<typeof RetentionReport>;

/** Deleting a knowledge record, a saved page and an entity (docs/api.md, "Deleting stored originals"). */
export const PageParams = z.object({ page_id: pathId("Page") });
export const EntityParams = z.object({ entity_id: pathId("Entity") });

export const RecordDeletionReceipt = z.object({
  insight_id: z.uuid(),
  deleted: z.literal(true),
  deleted_at: z.string(),
  entity_id: z.uuid().nullable(),
  project_id: z.uuid().nullable(),
  revision: z.number().int().describe("The record's last revision"),
  change_seq: z.string().describe("The number of the `deleted` event in the scope's change feed"),
  removed: z.object({
    revisions: z.number().int(),
    citations: z.number().int(),
    actions: z.number().int().describe("Actions derived from its revisions (with their executions)"),
    share_links: z.number().int(),
    change_events_cleared: z.number().int().describe("Earlier change-feed events of the record whose title was cleared"),
  }),
});
export type RecordDeletionReceipt = z.infer<typeof RecordDeletionReceipt>;

export const PageDeletionReceipt = z.object({
  page_id: z.uuid(),
  deleted: z.literal(true),
  deleted_at: z.string(),
  project_id: z.uuid().nullable(),
  version: z.number().int().describe("The page's last version"),
});
export type PageDeletionReceipt = z.infer<typeof PageDeletionReceipt>;

export const EntityDeletionRecord = z.object({
  id: z.uuid(),
  entity_id: z.uuid(),
  workspace_id: z.uuid(),
  status: z.enum(ERASURE_STATUSES),
  requested_by: z.uuid().nullable(),
  progress: z.object({
    jobs_cancelled: z.number().int().describe("Jobs on the entity cancelled by the deletion"),
    originals_matched: z.number().int().describe("Content rows of the entity when the deletion was requested"),
    remaining: z.number().int().describe("Content rows of the entity still stored"),
    rows_deleted: z.number().int(),
    opinion_units_deleted: z.number().int(),
    analyses_updated: z.number().int().describe("Analyses that quoted its originals, rewritten (their own analyses are then deleted)"),
    knowledge_citations_cleared: z.number().int(),
    batches: z.number().int(),
  }),
  removed: z
    .record(z.string(), z.union([z.number().int(), z.array(z.string())]))
    .describe("Once completed: what went with the entity, by kind, and `detached_entity_ids` (entities it was the parent of)"),
  error: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
  finished_at: z.string().nullable(),
  next: z.string().describe("Where to read the deletion's progress"),
});
export type EntityDeletionRecord = z.infer<typeof EntityDeletionRecord>;

/** Deleting a project (docs/api.md, "Delete a project"). */
export const ProjectParams = z.object({ project_id: pathId("Project") });

export const ProjectDeletionRecord = z.object({
  id: z.uuid(),
  project_id: z.uuid(),
  workspace_id: z.uuid(),
  status: z.enum(ERASURE_STATUSES),
  requested_by: z.uuid().nullable(),
  progress: z.object({
    jobs_cancelled: z.number().int().describe("Jobs on the project and its entities cancelled by the deletion"),
    entities_matched: z.number().int().describe("Entities of the project, each deleted by an entity deletion of its own"),
    entities_remaining: z.number().int().describe("Of those, not deleted yet"),
    originals_matched: z.number().int().describe("Content rows of the project's entities when the deletion was requested"),
    remaining: z.number().int().describe("Content rows of the project's entities still stored"),
    rows_deleted: z.number().int().describe("Content rows its entity deletions deleted"),
    opinion_units_deleted: z.number().int(),
    analyses_updated: z.number().int().describe("Analyses of other scopes that quoted the entities' originals, rewritten"),
    knowledge_citations_cleared: z.number().int(),
    batches: z.number().int(),
  }),
  entities: z
    .array(
      z.object({
        entity_id: z.uuid(),
        deletion_id: z.uuid(),
        status: z.enum(ERASURE_STATUSES),
        next: z.string().describe("The entity deletion's own progress"),
      }),
    )
    .describe("The entity deletions the project's deletion runs, oldest first"),
  removed: z
    .record(z.string(), z.number().int())
    .describe("Once completed: what went with the project (its analyses, knowledge records, share links, …) and what was detached from it"),
  error: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
  finished_at: z.string().nullable(),
  next: z.string().describe("Where to read the deletion's progress"),
});
export type ProjectDeletionRecord = z.infer<typeof ProjectDeletionRecord>;
