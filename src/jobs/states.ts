import type { JobKind, TerminalState } from "./events.js";

/**
 * The one state machine of every job kind (collection jobs, analyses, workflow runs, note
 * syncs, evidence capture runs). A row moves only along these edges; every writer guards its
 * UPDATE with the states it may leave, so a cancelled or finished job is never overwritten by a
 * late worker, a retry or an operator.
 *
 *   queued ──▶ running ──▶ completed | partial | failed | cancelled
 *     │           │
 *     │           └──▶ queued      (an operator's requeue after a lost queue entry)
 *     └──▶ cancelled | failed      (cancelled before it ran; refused at start)
 *
 * Terminal states are final: no edge leaves them. A retry (of a failed note sync or capture run
 * under its key, or an operator's requeue-job of a failed collection job) is a new row, attempt
 * n + 1 of the same key with `retry_of` naming the failed row, which stays as it ended.
 *
 * Workflow runs have one more terminal state, `blocked` (every platform refused collection;
 * nothing is charged); it is reported to subscribers as `failed`.
 */
export const JOB_STATES = ["queued", "running", "completed", "partial", "failed", "cancelled", "blocked"] as const;
export type JobState = (typeof JOB_STATES)[number];

export const TRANSITIONS: Readonly<Record<JobState, readonly JobState[]>> = {
  queued: ["running", "cancelled", "failed"],
  running: ["queued", "completed", "partial", "failed", "cancelled", "blocked"],
  completed: [],
  partial: [],
  failed: [],
  cancelled: [],
  blocked: [],
};

/** States a job is still in progress in: the only ones a cancel or a worker may leave. */
export const LIVE_STATES: readonly JobState[] = ["queued", "running"];

export const isLive = (status: string): boolean => (LIVE_STATES as readonly string[]).includes(status);

/** States no job ever leaves (a retry is a new attempt, a new row). */
export const isTerminal = (status: string): boolean => Object.hasOwn(TRANSITIONS, status) && TRANSITIONS[status as JobState].length === 0;

export const canTransition = (from: string, to: JobState): boolean => (TRANSITIONS[from as JobState] ?? []).includes(to);

/** The state a subscriber sees for a terminal row state. */
export function terminalEventState(status: string): TerminalState | undefined {
  if (status === "blocked") return "failed";
  if (status === "completed" || status === "partial" || status === "failed" || status === "cancelled") return status;
  return undefined;
}

/** The table that holds each kind's rows (and their `status`). */
export const KIND_TABLES = {
  collection_job: "collection_jobs",
  analysis: "analyses",
  workflow_run: "workflow_runs",
  note_sync: "note_syncs",
  sweep_run: "sweep_runs",
} as const satisfies Record<JobKind, string>;
