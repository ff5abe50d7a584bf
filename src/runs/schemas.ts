import { z } from "zod";
import { pathId } from "../platform/validation.js";

export const IDEMPOTENCY_KEY = z
  .string()
  .min(8)
  .max(128)
  .regex(/^[A-Za-z0-9][A-Za-z0-9._:-]+$/);

export const RunHeaders = z.object({ "idempotency-key": IDEMPOTENCY_KEY });

export const CreateRunBody = z.object({
  scope_hash: z.string().regex(/^[0-9a-f]{64}$/, "scope_hash is the 64-character hex digest from the quote"),
  max_charge_credits: z.number().int().min(0).max(100_000_000),
});
export type CreateRunInput = z.output<typeof CreateRunBody>;

export const RunParams = z.object({ entity_id: pathId("Entity"), skill_id: pathId("Skill"), run_id: pathId("Run") });

export const RunRecord = z.object({
  id: z.uuid(),
  skill_id: z.uuid(),
  entity_id: z.uuid(),
  workspace_id: z.uuid(),
  status: z.enum(["queued", "running", "completed", "failed", "blocked", "cancelled"]),
  source_mode: z.enum(["saved", "refresh"]),
  scope_hash: z.string(),
  estimated_credits: z.number().int(),
  max_charge_credits: z.number().int(),
  charged_credits: z.number().int(),
  collection_job_id: z.string().nullable(),
  analysis_id: z.string().nullable(),
  error: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
  finished_at: z.string().nullable(),
  // Set when a routine started the run: the routine and the occurrence it ran for.
  routine_id: z.uuid().nullable(),
  routine_occurrence_at: z.string().nullable(),
  links: z.object({ self: z.string(), analysis: z.string().nullable(), collection_job: z.string().nullable() }),
});
export type RunRecord = z.infer<typeof RunRecord>;

export const RunList = z.object({ entity_id: z.uuid(), runs: z.array(RunRecord), count: z.number().int() });
