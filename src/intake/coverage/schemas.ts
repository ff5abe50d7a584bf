import { z } from "zod";
import { isoDateTimeString } from "../../platform/dates.js";
import { optional, withDefault } from "../../platform/validation.js";
import { CoverageState, PLATFORMS } from "../../platform/vocabulary.js";

/**
 * Coverage records (spec operation 3): what a collector attempted for an entity and
 * whether it proved coverage. Stored apart from content rows, so a run that stored
 * nothing new can still prove `exhaustive` or `blocked`.
 */
/** Stored as sent (text); checked like every other date field. */
const isoDateTime = isoDateTimeString({ max: 200 });

const Count = z.number().int().min(0);
const Label = z.string().max(200);

export const CoverageTarget = z.object({
  target: z.string().min(1).max(2000),
  target_type: withDefault(Label, "account"),
  role: withDefault(Label, "unknown"),
  source_group: optional(Label),
  sender_type: optional(Label),
  status: withDefault(Label, "unknown"),
  items_found: withDefault(Count, 0),
  items_stored: withDefault(Count, 0),
  cursor_start: optional(z.string().max(4000)),
  cursor_end: optional(z.string().max(4000)),
  reached_end: optional(z.boolean()),
  error: optional(z.string().max(5000)),
  metadata: optional(z.record(z.string(), z.unknown())),
});
export type CoverageTarget = z.output<typeof CoverageTarget>;

/** The collector that reports: a platform, or `unknown`. */
export const Collector = z.enum([...PLATFORMS, "unknown"]);

const recordFields = {
  coverage_state: CoverageState,
  collector: withDefault(Collector, "unknown"),
  collection_scope: withDefault(z.string().max(200), "unknown"),
  run_id: optional(z.string().min(1).max(200)),
  query: optional(z.string().max(5000)),
  started_at: optional(isoDateTime),
  finished_at: optional(isoDateTime),
  targets: withDefault(z.array(CoverageTarget).max(200), []),
  totals: withDefault(z.record(z.string(), z.unknown()), {}),
  notes: optional(z.string().max(5000)),
};

export const CoverageRequestBody = z.object({ entity_id: z.string().min(1).max(100), ...recordFields });

/** The request minus `entity_id`: what the collection worker passes to `recordCoverage`. */
export const CoverageInputSchema = z.object(recordFields);
export type CoverageInput = z.output<typeof CoverageInputSchema>;

/**
 * Content rows the run stored that were removed afterwards (src/intake/coverage/removals.ts): the record's own
 * counts stay what the collector reported, so what it still holds is its stored count minus `rows`.
 */
export const RemovedAfter = z
  .object({
    rows: z.number().int().describe("Rows removed in all: originals and the comments below them"),
    deleted: z.number().int().describe("Deleted one by one (DELETE /agent/v1/content/{id}) or with their entity"),
    author_erased: z.number().int().describe("Removed by an author erasure"),
    retention: z.number().int().describe("Removed by the workspace's retention"),
    last_removed_at: z.string().nullable().describe("When the last of them was removed; null when none was"),
  })
  .describe("Rows this run stored that were removed afterwards, by reason");
export type RemovedAfter = z.infer<typeof RemovedAfter>;

export const CoverageResponse = z.object({
  status: z.literal("recorded"),
  entity_id: z.string(),
  run_id: z.string(),
  coverage_state: z.string(),
  targets_recorded: z.number().int(),
  removed_after: RemovedAfter,
});
export type CoverageResponse = z.infer<typeof CoverageResponse>;
