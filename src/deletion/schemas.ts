import { z } from "zod";
import { Platform } from "../ingest/vocabulary.js";
import { pathId } from "../platform/validation.js";

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
