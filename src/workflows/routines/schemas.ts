import { z } from "zod";
import { INTERVAL_HOURS } from "./schedule.js";

export const SOURCE_MODES = ["saved", "refresh"] as const;

/** Why an occurrence started no run. The first two leave the routine enabled; the others stop it. */
export const SKIP_REASONS = ["price_above_ceiling", "insufficient_credits", "skill_removed", "access_revoked"] as const;
export type SkipReason = (typeof SKIP_REASONS)[number];

/**
 * `last_outcome` of a routine: a run was dispatched, an occurrence was skipped (the reason), or the
 * last dispatch attempt failed (the occurrence stays due and is retried).
 */
export const OUTCOMES = ["dispatched", ...SKIP_REASONS, "dispatch_failed"] as const;
export type Outcome = (typeof OUTCOMES)[number];

export const RoutineBody = z.object({
  enabled: z.boolean(),
  interval_hours: z.literal(INTERVAL_HOURS),
  source_mode: z.enum(SOURCE_MODES),
  max_charge_cents: z.number().int().min(1).max(10_000),
  // 0 creates the routine; otherwise the revision the caller last read.
  expected_revision: z.number().int().min(0).max(2_147_483_647),
});
export type RoutineInput = z.output<typeof RoutineBody>;

export const RoutineRecord = z.object({
  skill_id: z.string(),
  entity_id: z.uuid(),
  revision: z.number().int(),
  enabled: z.boolean(),
  interval_hours: z.number().int(),
  source_mode: z.enum(SOURCE_MODES),
  max_charge_cents: z.number().int(),
  next_run_at: z.string().nullable(),
  last_run_at: z.string().nullable(),
  last_run_id: z.uuid().nullable(),
  last_outcome: z.enum(OUTCOMES).nullable(),
  last_outcome_detail: z.string().nullable(),
  last_occurrence_at: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
  updated_by: z.uuid(),
});
export type RoutineRecord = z.infer<typeof RoutineRecord>;

export const OccurrenceRecord = z.object({
  occurrence_at: z.string(),
  outcome: z.enum(["dispatched", "skipped"]),
  reason: z.string().nullable(),
  detail: z.string().nullable(),
  run_id: z.uuid().nullable(),
  coalesced: z.number().int(),
  estimated_credits: z.number().int().nullable(),
  recorded_at: z.string(),
});

export const RoutineDetail = RoutineRecord.extend({ occurrences: z.array(OccurrenceRecord) });

export const RoutineList = z.object({
  entity_id: z.uuid(),
  scheduler_enabled: z.boolean(),
  scheduler_last_seen_at: z.string().nullable(),
  routines: z.array(RoutineRecord),
});
