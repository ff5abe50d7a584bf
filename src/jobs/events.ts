/**
 * The event every job kind emits when it reaches a terminal state. The lifecycle module
 * (`src/jobs/`) emits it once per terminal transition; webhooks and continuations consume it.
 */
export const JOB_KINDS = ["collection_job", "analysis", "workflow_run", "note_sync", "sweep_run"] as const;
export type JobKind = (typeof JOB_KINDS)[number];

export const TERMINAL_STATES = ["completed", "partial", "failed", "cancelled"] as const;
export type TerminalState = (typeof TERMINAL_STATES)[number];

/** Event types as subscribers name them: `<kind>.<state>`, e.g. `collection_job.completed`. */
export type JobEventType = `${JobKind}.${TerminalState}`;
export const JOB_EVENT_TYPES: readonly JobEventType[] = JOB_KINDS.flatMap((kind) =>
  TERMINAL_STATES.map((state) => `${kind}.${state}` as JobEventType),
);

export interface JobEvent {
  kind: JobKind;
  /** The job's own id (collection job id, analysis id, workflow run id, note sync id). */
  id: string;
  workspaceId: string;
  status: TerminalState;
  occurredAt: Date;
  /** Small, kind-specific facts for the payload (entity_id, links, error); never secrets. */
  data: Record<string, unknown>;
}

export const eventType = (event: Pick<JobEvent, "kind" | "status">): JobEventType => `${event.kind}.${event.status}`;
