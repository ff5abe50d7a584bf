import { z } from "zod";
import { optional, pathId } from "../../platform/validation.js";
import { SkillId } from "../skills/schemas.js";

export const IDEMPOTENCY_KEY = z
  .string()
  .min(8)
  .max(128)
  .regex(/^[A-Za-z0-9][A-Za-z0-9._:-]+$/);

export const RunHeaders = z.object({ "idempotency-key": IDEMPOTENCY_KEY });

/**
 * The approval of a run: the quoted `scope_hash` and the maximum the caller accepts. Both or neither:
 * without them the run goes ahead under the caller's own latest quote of the skill, if one is still
 * valid, at that quote's maximum (the reference client's bare call); otherwise nothing runs and the
 * answer is a 409 `approval_required` with a fresh quote to review.
 */
export const CreateRunBody = z
  .object({
    scope_hash: optional(z.string().regex(/^[0-9a-f]{64}$/, "scope_hash is the 64-character hex digest from the quote")),
    max_charge_credits: optional(z.number().int().min(0).max(100_000_000)),
  })
  .superRefine((body, ctx) => {
    const missing = body.scope_hash === undefined ? "scope_hash" : body.max_charge_credits === undefined ? "max_charge_credits" : null;
    if (missing && (body.scope_hash !== undefined || body.max_charge_credits !== undefined)) {
      ctx.addIssue({
        code: "custom",
        path: [missing],
        message: "scope_hash and max_charge_credits approve a quote together; send both, or neither to run under your latest quote",
        params: { type: "missing" },
      });
    }
  });
export type CreateRunInput = z.output<typeof CreateRunBody>;

/** Which quote a bare approval takes: of source_mode `saved` unless the query says `refresh`. */
export const CreateRunQuery = z.object({ source_mode: optional(z.enum(["saved", "refresh"])) });
export type CreateRunQuery = z.output<typeof CreateRunQuery>;

export const RunParams = z.object({ entity_id: pathId("Entity"), skill_id: pathId("Skill", SkillId), run_id: pathId("Run") });

export const RunRecord = z.object({
  id: z.uuid(),
  skill_id: z.string(),
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
