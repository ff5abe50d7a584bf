import { z } from "zod";
import { RemovedAfter } from "../../intake/coverage/schemas.js";
import { queryInt } from "../../platform/validation.js";
import { Platform } from "../../platform/vocabulary.js";

/** Raw export (spec operations 11 and 12): full-fidelity rows and the completeness audit. */
export const EXPORT_TABLES = [
  "entities",
  "content_store",
  "opinion_units",
  "entity_insights",
  "insight_evidence",
  "pages",
  "knowledge",
] as const;
export type ExportTable = (typeof EXPORT_TABLES)[number];

export const DEFAULT_EXPORT_LIMIT = 1000;
export const MAX_EXPORT_LIMIT = 5000;

export const ExportTableParams = z.object({ table_name: z.enum(EXPORT_TABLES) });

export const ExportTableQuery = z.object({
  entity_id: z.uuid().optional(),
  limit: queryInt(1, MAX_EXPORT_LIMIT).optional(),
  offset: queryInt(0, 1_000_000_000).optional(),
  /** Keyset position from a previous page's `next_cursor`: rows strictly after it. */
  cursor: z.string().min(1).max(200).optional(),
});

export const ExportTableResponse = z.object({
  table: z.enum(EXPORT_TABLES),
  rows: z.array(z.record(z.string(), z.unknown())),
  count: z.number().int(),
  total: z.number().int(),
  limit: z.number().int(),
  offset: z.number().int(),
  next_offset: z.number().int().nullable(),
  next_cursor: z.string().nullable(),
});
export type ExportTableResponse = z.infer<typeof ExportTableResponse>;

export const CompletenessQuery = z.object({
  entity_id: z.uuid().optional(),
  workspace_id: z.uuid().optional(),
  platform: Platform.optional(),
});
export type CompletenessQuery = z.output<typeof CompletenessQuery>;

const Counts = {
  rows: z.number().int(),
  sources: z.number().int(),
  comments: z.number().int(),
  with_text: z.number().int(),
  with_url: z.number().int(),
  with_embedding: z.number().int(),
  with_opinion_units: z.number().int(),
  with_enrichment: z.number().int(),
  /** Originals deleted on purpose (src/governance/deletion): not stored, not counted in `rows`, and not a gap. */
  deleted: z.number().int(),
};

export const PlatformCompleteness = z.object({
  platform: z.string(),
  ...Counts,
  coverage_state: z.string().nullable(),
  coverage_recorded_at: z.string().nullable(),
  coverage_finished_at: z.string().nullable(),
  coverage_run_id: z.string().nullable(),
  coverage_proven: z.boolean(),
  enrichment_complete: z.boolean(),
  /** Of `deleted`, those deleted after the latest coverage record was written. */
  deleted_after_coverage: z.number().int(),
  last_deleted_at: z.string().nullable(),
  /**
   * Rows the latest coverage record's run stored that were removed afterwards, by reason (null without a
   * record; summed over the entities' latest records in `platforms`).
   */
  coverage_removed_after: RemovedAfter.nullable(),
});
export type PlatformCompleteness = z.infer<typeof PlatformCompleteness>;

export const CompletenessResponse = z.object({
  scope: z.object({
    workspace_ids: z.array(z.string()),
    entity_ids: z.array(z.string()),
    platform: z.string().nullable(),
  }),
  comprehensive: z.boolean(),
  totals: z.object(Counts),
  platforms: z.array(PlatformCompleteness),
  entities: z.array(
    z.object({
      entity_id: z.string(),
      name: z.string(),
      comprehensive: z.boolean(),
      platforms: z.array(PlatformCompleteness),
    }),
  ),
  gaps: z.array(z.string()),
  checked_at: z.string(),
});
export type CompletenessResponse = z.infer<typeof CompletenessResponse>;
