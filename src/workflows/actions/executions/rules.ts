import { canonicalJson } from "../../../platform/canonical.js";
import type { Prisma } from "../../../platform/db.js";
import { AppError, ValidationFailed, type ValidationIssue } from "../../../platform/errors.js";
import {
  type ExecutionStatus,
  FINAL_STATUSES,
  NEXT_STATUSES,
  REVIEWABLE_STATUSES,
  type ReviewStatus,
  type StepResultInput,
  type StepResultRecord,
  TRAINING_SCOPES,
  type TrainingScope,
  type UpdateExecutionInput,
} from "./schemas.js";

/**
 * The rules of an execution's change, free of storage: the status moves forward only and a final
 * status never changes; the report (step results, outcome summary, metrics) is the executor's until
 * it is reviewed, after which only a request carrying a new review decision changes it; a review
 * needs a completed or failed execution; training scopes need an approved review, and a review
 * that is no longer approved drops them. Who may send what is checked by the service.
 */
type ExecutionRow = Prisma.ActionExecutionGetPayload<object>;

/** Step texts compare ignoring case and runs of white space. */
const stepKey = (text: string) => text.normalize("NFC").trim().replace(/\s+/g, " ").toLowerCase();

/** The results as stored: each names one of the execution's steps by index, once; ordered by step. */
export function resolveStepResults(steps: readonly string[], results: readonly StepResultInput[]): StepResultRecord[] {
  const issues: ValidationIssue[] = [];
  const used = new Set<number>();
  const keys = steps.map(stepKey);
  const resolved: StepResultRecord[] = [];
  results.forEach((result, position) => {
    const loc = ["body", "step_results", position, "step"];
    let index: number;
    if (result.step === undefined) index = position;
    else if (typeof result.step === "number") index = result.step;
    else {
      const key = stepKey(result.step);
      index = keys.findIndex((k, i) => k === key && !used.has(i));
      if (index < 0) index = keys.indexOf(key);
      if (index < 0) {
        issues.push({ loc, msg: "Input should be the text of one of the execution's steps", type: "value_error" });
        return;
      }
    }
    if (index >= steps.length) {
      issues.push({
        loc,
        msg: `The execution has ${steps.length} step(s): name one by its index from 0 to ${steps.length - 1}`,
        type: "value_error",
      });
      return;
    }
    if (used.has(index)) {
      issues.push({ loc, msg: `Step ${index} already has a result in this list: give each step's result once`, type: "value_error" });
      return;
    }
    used.add(index);
    const summary = result.summary ?? result.result ?? "";
    resolved.push({ step_index: index, step: steps[index] as string, status: result.status, summary: summary === "" ? null : summary });
  });
  if (issues.length > 0) throw new ValidationFailed(issues);
  return resolved.sort((a, b) => a.step_index - b.step_index);
}

const conflict = (detail: string, row: ExecutionRow) =>
  new AppError("conflict", detail, { extra: { status: row.status, review_status: row.reviewStatus, current_revision: row.revision } });

const sameJson = (a: unknown, b: unknown) => canonicalJson(a ?? null) === canonicalJson(b ?? null);

/** The scopes in their canonical order, each once. */
const scopesOf = (scopes: readonly string[]): TrainingScope[] => TRAINING_SCOPES.filter((s) => scopes.includes(s));

/**
 * What the update changes on `row`, or null when it changes nothing (a repeated request). Throws
 * 409 `conflict` for a change the rules refuse and 422 for step results naming no step.
 */
export function plannedChanges(
  row: ExecutionRow,
  input: UpdateExecutionInput,
  userId: string,
  now: Date,
): Prisma.ActionExecutionUpdateManyMutationInput | null {
  const changes: Prisma.ActionExecutionUpdateManyMutationInput = {};
  const current = row.status as ExecutionStatus;

  let status = current;
  if (input.status !== undefined && input.status !== current) {
    if (FINAL_STATUSES.includes(current)) {
      throw conflict(`The execution is ${current}, which is final: its status does not change again.`, row);
    }
    if (!NEXT_STATUSES[current].includes(input.status)) {
      throw conflict(`An execution's status moves forward only: ${current} may become ${NEXT_STATUSES[current].join(", ")}.`, row);
    }
    status = input.status;
    changes.status = status;
    changes.finishedAt = FINAL_STATUSES.includes(status) ? now : null;
  }

  const report: Prisma.ActionExecutionUpdateManyMutationInput = {};
  if (input.step_results !== undefined) {
    const results = resolveStepResults(row.steps, input.step_results);
    if (!sameJson(results, row.stepResults)) report.stepResults = results as unknown as Prisma.InputJsonValue;
  }
  if (input.outcome_summary !== undefined) {
    const summary = input.outcome_summary === "" ? null : input.outcome_summary;
    if (summary !== row.outcomeSummary) report.outcomeSummary = summary;
  }
  if (input.metrics !== undefined && !sameJson(input.metrics, row.metrics)) report.metrics = input.metrics;
  const reportChanged = Object.keys(report).length > 0;
  const decided = input.review_status !== undefined;
  if (reportChanged && row.reviewStatus !== "pending" && !decided) {
    throw conflict(
      `The execution's report was reviewed (${row.reviewStatus}): it changes only together with a new review decision (review_status).`,
      row,
    );
  }
  Object.assign(changes, report);

  let review = row.reviewStatus as ReviewStatus;
  if (input.review_status !== undefined && input.review_status !== review) {
    if (!REVIEWABLE_STATUSES.includes(status)) {
      throw conflict(`Only a completed or failed execution's report is reviewed; this execution is ${status}.`, row);
    }
    review = input.review_status;
  }

  let scopes = scopesOf(row.trainingScopes);
  if (input.training_scopes !== undefined) {
    const wanted = scopesOf(input.training_scopes);
    if (wanted.length > 0 && review !== "approved") {
      throw conflict(`Training scopes are granted with or after an approved review; this execution's review is ${review}.`, row);
    }
    scopes = wanted;
  }
  // A review that is no longer approved withdraws what the approval granted.
  if (review !== "approved") scopes = [];

  if (review !== row.reviewStatus || !sameJson(scopes, row.trainingScopes) || (decided && reportChanged)) {
    changes.reviewStatus = review;
    changes.trainingScopes = scopes;
    changes.reviewedBy = review === "pending" ? null : userId;
    changes.reviewedAt = review === "pending" ? null : now;
  }
  return Object.keys(changes).length > 0 ? changes : null;
}
