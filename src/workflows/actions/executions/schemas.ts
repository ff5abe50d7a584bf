import { z } from "zod";
import { optional, pathId, queryInt, withDefault } from "../../../platform/validation.js";
import { PAGE_FIELDS } from "../schemas.js";

/**
 * Action executions (`/api/sweeps/objects/{object_id}/executions`, `/api/sweeps/executions/{execution_id}`,
 * the agent client's `ingest` destination `execution`): an approved handoff of an action to an
 * executor, what the executor reported, and a reviewer's decision about that report.
 *
 * Glossary:
 * - steps: the ordered steps a member approved for execution (fixed once created).
 * - status: where the execution is: approved, running, then one final status (completed, failed,
 *   cancelled). It moves forward only.
 * - report: step_results, outcome_summary and metrics, as the executor reported them.
 * - review: review_status (pending, approved, rejected) and training_scopes, decided by a reviewer
 *   (a workspace `owner` or `admin`) about a completed or failed execution's report.
 */
export const EXECUTION_STATUSES = ["approved", "running", "completed", "failed", "cancelled"] as const;
export type ExecutionStatus = (typeof EXECUTION_STATUSES)[number];
/** Statuses that end an execution; none of them changes again. */
export const FINAL_STATUSES: readonly ExecutionStatus[] = ["completed", "failed", "cancelled"];
/** The statuses each status may move to (forward only). */
export const NEXT_STATUSES: Record<ExecutionStatus, readonly ExecutionStatus[]> = {
  approved: ["running", "completed", "failed", "cancelled"],
  running: ["completed", "failed", "cancelled"],
  completed: [],
  failed: [],
  cancelled: [],
};
/** Statuses whose report may be reviewed. */
export const REVIEWABLE_STATUSES: readonly ExecutionStatus[] = ["completed", "failed"];
export const STEP_STATUSES = ["pending", "running", "completed", "failed", "skipped"] as const;
export const REVIEW_STATUSES = ["pending", "approved", "rejected"] as const;
export type ReviewStatus = (typeof REVIEW_STATUSES)[number];
export const TRAINING_SCOPES = ["internal_harness", "external_harness", "fine_tuning"] as const;
export type TrainingScope = (typeof TRAINING_SCOPES)[number];

export const MAX_STEPS = 50;
export const MAX_STEP_CHARS = 2000;
export const MAX_METRICS = 50;
/** A metric's name: what the reference client's training converter keeps (others it drops). */
export const METRIC_NAME = /^[A-Za-z][A-Za-z0-9_.-]{0,63}$/;

const Step = z.string().trim().min(1).max(MAX_STEP_CHARS);
const StepSummary = z.string().trim().max(MAX_STEP_CHARS);

export const CreateExecutionBody = z.object({
  executor_platform: z.string().trim().min(1).max(100),
  approved_for_execution: z.literal(true),
  steps: z.array(Step).min(1).max(MAX_STEPS),
});
export type CreateExecutionInput = z.output<typeof CreateExecutionBody>;

/**
 * One step's result as sent: `step` names the step by its index (from 0) or its text (matched
 * ignoring case and runs of spaces); absent, the item's position in the list. `result` is the
 * reference client's name for `summary`.
 */
export const StepResultInput = z
  .object({
    step: optional(
      z.union(
        [
          z
            .number()
            .int()
            .min(0)
            .max(MAX_STEPS - 1),
          Step,
        ],
        { error: "Input should be a step's index (from 0) or its text" },
      ),
    ),
    status: z.enum(STEP_STATUSES),
    summary: optional(StepSummary),
    result: optional(StepSummary),
  })
  .superRefine((v, ctx) => {
    if (v.summary !== undefined && v.result !== undefined && v.summary !== v.result) {
      ctx.addIssue({ code: "custom", path: ["result"], message: "Give the step's summary once: summary or result, not both" });
    }
  });
export type StepResultInput = z.output<typeof StepResultInput>;

/** Measured values by name: numbers or booleans only (no text, no nesting), at most MAX_METRICS. */
const Metrics = z
  .record(z.string(), z.union([z.number(), z.boolean()], { error: "Input should be a number or a boolean (a measured value)" }))
  .superRefine((metrics, ctx) => {
    const names = Object.keys(metrics);
    if (names.length > MAX_METRICS) {
      ctx.addIssue({ code: "custom", path: [], message: `Give at most ${MAX_METRICS} metrics`, params: { type: "too_long" } });
    }
    for (const name of names.filter((n) => !METRIC_NAME.test(n)).slice(0, 10)) {
      ctx.addIssue({
        code: "custom",
        path: [name],
        message: "A metric's name starts with a letter and has at most 64 letters, digits, '_', '.' or '-'",
        params: { type: "string_pattern_mismatch" },
      });
    }
  });

export const UpdateExecutionBody = z
  .object({
    status: optional(z.enum(EXECUTION_STATUSES)),
    step_results: optional(z.array(StepResultInput).max(MAX_STEPS)),
    outcome_summary: optional(z.string().trim().max(4000)),
    metrics: optional(Metrics),
    review_status: optional(z.enum(REVIEW_STATUSES)),
    training_scopes: optional(z.array(z.enum(TRAINING_SCOPES)).max(TRAINING_SCOPES.length)),
    expected_revision: optional(z.number().int().min(1).max(1_000_000)),
  })
  .superRefine((v, ctx) => {
    if ([v.status, v.step_results, v.outcome_summary, v.metrics, v.review_status, v.training_scopes].every((f) => f === undefined)) {
      ctx.addIssue({
        code: "custom",
        path: [],
        message: "Send at least one of status, step_results, outcome_summary, metrics, review_status or training_scopes",
      });
    }
  });
export type UpdateExecutionInput = z.output<typeof UpdateExecutionBody>;

/** Fields only a reviewer may send. */
export const REVIEW_FIELDS = ["review_status", "training_scopes"] as const;

export const ListExecutionsQuery = z.object({
  limit: withDefault(queryInt(1, 200), 50),
  offset: withDefault(queryInt(0, 1_000_000), 0),
  status: optional(z.enum(EXECUTION_STATUSES)),
  review_status: optional(z.enum(REVIEW_STATUSES)),
});
export type ListExecutionsQuery = z.output<typeof ListExecutionsQuery>;

export const ExecutionParams = z.object({ execution_id: pathId("Execution") });

export const StepResultRecord = z.object({
  step_index: z.number().int(),
  step: z.string(),
  status: z.enum(STEP_STATUSES),
  summary: z.string().nullable(),
});
export type StepResultRecord = z.infer<typeof StepResultRecord>;

export const ExecutionRecord = z.object({
  id: z.string(),
  action_id: z.string(),
  entity_id: z.string(),
  workspace_id: z.string(),
  executor_platform: z.string(),
  approved_for_execution: z.literal(true),
  approved_by: z.string(),
  steps: z.array(z.string()),
  status: z.enum(EXECUTION_STATUSES),
  step_results: z.array(StepResultRecord),
  outcome_summary: z.string().nullable(),
  metrics: z.record(z.string(), z.union([z.number(), z.boolean()])),
  review_status: z.enum(REVIEW_STATUSES),
  reviewed_by: z.string().nullable(),
  reviewed_at: z.string().nullable(),
  training_scopes: z.array(z.enum(TRAINING_SCOPES)),
  revision: z.number().int(),
  created_by: z.string(),
  updated_by: z.string(),
  created_at: z.string(),
  updated_at: z.string(),
  finished_at: z.string().nullable(),
});
export type ExecutionRecord = z.infer<typeof ExecutionRecord>;

export const EXECUTION_BASIS =
  "An execution records steps a member approved and what its executor reported; outcomes and metrics are as reported, not verified here.";

export const ExecutionList = z.object({
  action_id: z.string(),
  executions: z.array(ExecutionRecord),
  ...PAGE_FIELDS,
});
