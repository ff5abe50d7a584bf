import type { Queue } from "bullmq";
import { groupedById } from "../platform/db.js";
import { AppError } from "../platform/errors.js";
import { publish } from "../platform/redis.js";
import { rowStatus } from "./cancellation.js";
import { endedChannel } from "./channels.js";
import type { JobEvent, JobKind } from "./events.js";
import { jobIds } from "./ids.js";
import { type JobDeps, jobEndListeners, kindDefinition } from "./registry.js";
import { KIND_TABLES, terminalEventState } from "./states.js";

/**
 * The lifecycle every job kind shares: the one cancel transition,
 * removal of a queue entry that has not started, and what happens once a job has ended
 * (subscribers are told, and a workflow run waiting on the job continues).
 */
export const KIND_NAMES: Record<JobKind, string> = {
  collection_job: "The collection job",
  analysis: "The analysis",
  workflow_run: "The workflow run",
  note_sync: "The meeting-note sync",
  sweep_run: "The evidence capture run",
};

type Deps = JobDeps;

/**
 * `queued | running → cancelled`, in one statement. `changed` is false when the row had
 * already left those states; `status` is then the state it is in (undefined: no such row).
 */
export async function markCancelled(
  db: Deps["db"],
  kind: JobKind,
  id: string,
  detail = "cancelled by the caller",
): Promise<{ changed: boolean; status: string | undefined }> {
  // What the kind settles besides the status, in the same statement (src/jobs/registry.ts).
  const also = kindDefinition(kind).cancelAlsoSets;
  const updated = await db.$queryRawUnsafe<{ status: string }[]>(
    `UPDATE ${KIND_TABLES[kind]} SET status = 'cancelled', error = $2, finished_at = now(), updated_at = now()${also ? `, ${also}` : ""}
     WHERE id = $1::uuid AND status IN ('queued', 'running') RETURNING status`,
    id,
    detail,
  );
  if (updated[0]) return { changed: true, status: "cancelled" };
  return { changed: false, status: await rowStatus(db, kind, id)() };
}

/**
 * What a cancel answers when the row did not change: cancelling twice answers the same;
 * a job that ended otherwise is a 409 naming its state.
 */
export function assertCancelled(kind: JobKind, outcome: { changed: boolean; status: string | undefined }): void {
  if (outcome.changed || outcome.status === "cancelled") return;
  if (outcome.status === undefined) throw new AppError("not_found", `${KIND_NAMES[kind].replace(/^The /, "")} was not found.`);
  throw new AppError("conflict", `${KIND_NAMES[kind]} already ended (${outcome.status}); only a queued or running job can be cancelled.`, {
    extra: { status: outcome.status },
  });
}

/**
 * Removes a queue entry that no worker holds yet (waiting, delayed, prioritized). An active
 * entry stays: its worker sees the cancelled row at its next checkpoint and ends it.
 */
export async function removeQueuedEntry(queue: Queue, jobId: string): Promise<boolean> {
  const job = await queue.getJob(jobId).catch(() => undefined);
  if (!job) return false;
  const state = await job.getState().catch(() => "unknown");
  if (state !== "waiting" && state !== "delayed" && state !== "prioritized" && state !== "waiting-children") return false;
  return job
    .remove()
    .then(() => true)
    .catch(() => false);
}

/**
 * The cancel every kind goes through: the row's transition (`markCancelled`, or the kind's own when
 * it settles more than its row, as a workflow run's ledger), then, when this call made it, the queue
 * entry that has not started leaves and the end is announced. Answers the transition's outcome;
 * `assertCancelled` turns it into the API's answer.
 */
export async function cancelJob(
  deps: Deps,
  job: {
    kind: JobKind;
    id: string;
    /** The queue entry to take back, when the kind's job may still wait on its queue. */
    entry?: { queue: Queue; id: string };
    data?: Record<string, unknown>;
    detail?: string;
    transition?: () => Promise<{ changed: boolean; status: string | undefined }>;
  },
): Promise<{ changed: boolean; status: string | undefined }> {
  const outcome = await (job.transition ? job.transition() : markCancelled(deps.db, job.kind, job.id, job.detail));
  if (!outcome.changed) return outcome;
  if (job.entry) await removeQueuedEntry(job.entry.queue, job.entry.id);
  await jobEnded(deps, { kind: job.kind, id: job.id, status: "cancelled", data: job.data });
  return outcome;
}

/**
 * Any other terminal transition made outside a worker (an operator failing a job whose queue entry
 * was lost): the kind's transition answers the end it wrote, and it is announced here. True when
 * this call ended the job.
 */
export async function endJob(deps: Deps, transition: () => Promise<EndedJob | null>): Promise<boolean> {
  const ended = await transition();
  if (ended) await jobEnded(deps, ended);
  return ended !== null;
}

/**
 * How a job that a worker ran says that it ended: the kind's code writes the terminal row and
 * returns (or throws) what it wrote, marked with `endedWith`; the worker runtime announces it
 * (`jobEnded`) once the attempt is over, and so does its last-failure hook's answer. The mark is
 * not enumerable: it never reaches the queue's stored return value.
 */
const ENDED = Symbol("ended");

export function endedWith<T extends object>(value: T, ended: EndedJob | null | undefined): T {
  if (ended) Object.defineProperty(value, ENDED, { value: ended, enumerable: false });
  return value;
}

/** The end a job's result or error carries, if its attempt ended the job. */
export const endOf = (value: unknown): EndedJob | undefined =>
  value !== null && typeof value === "object" ? ((value as { [ENDED]?: EndedJob })[ENDED] ?? undefined) : undefined;

/**
 * A job's owner and workspace (null when its entity is gone), by kind, and for the kinds whose
 * retries are new attempts (src/jobs/attempts.ts) which attempt of its key it is.
 */
const NO_ATTEMPT = "NULL::int AS attempt, NULL::uuid AS retry_of";
/** The owner read of each kind, for the job whose id `k.id` names (a row of the ids the statement was given). */
const OWNER_SQL: Record<JobKind, string> = {
  collection_job:
    "SELECT j.user_id, e.workspace_id, j.attempt, j.retry_of FROM collection_jobs j LEFT JOIN entities e ON e.id = j.entity_id WHERE j.id = k.id",
  analysis: `SELECT a.user_id, COALESCE(a.workspace_id, e.workspace_id) AS workspace_id, ${NO_ATTEMPT} FROM analyses a LEFT JOIN entities e ON e.id = a.entity_id WHERE a.id = k.id`,
  workflow_run: `SELECT user_id, workspace_id, ${NO_ATTEMPT} FROM workflow_runs WHERE id = k.id`,
  note_sync:
    "SELECT n.user_id, e.workspace_id, n.attempt, n.retry_of FROM note_syncs n LEFT JOIN entities e ON e.id = n.entity_id WHERE n.id = k.id",
  sweep_run:
    "SELECT r.user_id, e.workspace_id, r.attempt, r.retry_of FROM sweep_runs r LEFT JOIN entities e ON e.id = r.entity_id WHERE r.id = k.id",
};

export { endedChannel } from "./channels.js";

export interface EndedJob {
  kind: JobKind;
  id: string;
  /** The row's terminal state. */
  status: string;
  data?: Record<string, unknown>;
}

/** What a job's end needs to know, read in one statement after the end committed (one row, even when the workspace is gone). */
interface EndedContext {
  user_id: string | null;
  workspace_id: string | null;
  /** Which attempt of its key the job is, and the failed job it retries (null for kinds without attempts). */
  attempt: number | null;
  retry_of: string | null;
  /** Whether any webhook endpoint of the workspace listens (most workspaces register none). */
  subscribed: boolean;
  /** Workflow runs waiting on this job as their collection or analysis step. */
  waiting_runs: string[];
}

/** The workflow-run column that names a job of this kind as a run's step, if runs wait on this kind. */
const RUN_STEP_COLUMN: Partial<Record<JobKind, string>> = {
  collection_job: "collection_job_id",
  analysis: "analysis_id",
};

/** One row per id of `$1` (an array), even when the job or its workspace is gone. */
function contextSqlOf(kind: JobKind): string {
  const column = RUN_STEP_COLUMN[kind];
  const runs = column
    ? `ARRAY(SELECT r.id::text FROM workflow_runs r WHERE r.${column} = k.id AND r.status IN ('queued', 'running'))`
    : "'{}'::text[]";
  return `SELECT k.id::text AS id, w.user_id, w.workspace_id, w.attempt, w.retry_of, EXISTS (
      SELECT 1 FROM webhook_endpoints x WHERE x.workspace_id = w.workspace_id AND x.deleted_at IS NULL
    ) AS subscribed, ${runs} AS waiting_runs
    FROM unnest($1::uuid[]) AS k(id) LEFT JOIN LATERAL (${OWNER_SQL[kind]}) w ON true`;
}

/** The statement a job's end runs, by kind (built once). */
const ENDED_CONTEXT_SQL = Object.fromEntries((Object.keys(OWNER_SQL) as JobKind[]).map((kind) => [kind, contextSqlOf(kind)])) as Record<
  JobKind,
  string
>;

export const endedContextSql = (kind: JobKind): string => ENDED_CONTEXT_SQL[kind];

/**
 * Called once a job's terminal state has committed (once per row: a terminal row never changes
 * again, and a retry is a new row that ends with its own id). Announces the end on the job's channel,
 * marks its owner as a writer (read-your-writes on replicas), lets a workflow run waiting on
 * this job continue, and records the webhook deliveries.
 * Never throws: the job has ended either way, and an operator's requeue repairs a
 * continuation lost here.
 *
 * The waiting runs are read after the end committed, as a run reads its step's job after
 * linking it: whichever of the two writes commits last, its reader sees the other, so no run
 * is left waiting on a job that has ended.
 */
export async function jobEnded(deps: Deps, ended: EndedJob): Promise<void> {
  const state = terminalEventState(ended.status);
  if (!state) return;
  try {
    await publish(deps.redis, endedChannel(deps.config.REDIS_PREFIX, ended.kind, ended.id), state);
  } catch (err) {
    deps.logger.warn({ err, kind: ended.kind, id: ended.id }, "job end not announced; waiters read the row");
  }
  let context: EndedContext | undefined;
  try {
    // The reads after the ends of one kind that come at once share one statement (each still after its own end).
    context = await groupedById<EndedContext & { id: string }>(deps.pool, ENDED_CONTEXT_SQL[ended.kind])(ended.id);
  } catch (err) {
    deps.logger.error({ err, kind: ended.kind, id: ended.id }, "could not read what waits on this job's end");
    return;
  }
  if (!context) return;
  // What the job stored was written for its owner: the owner's replica reads stay on the primary
  // for the read-your-writes window, as after a write of their own.
  if (context.user_id) await deps.reads.noteWriteBy(context.user_id);
  await continueWaitingRuns(deps, ended, context.waiting_runs).catch((err: unknown) =>
    deps.logger.error({ err, kind: ended.kind, id: ended.id }, "could not continue the workflow run waiting on this job"),
  );
  if (!context.workspace_id || !context.subscribed) return;
  const event: JobEvent = {
    kind: ended.kind,
    id: ended.id,
    workspaceId: context.workspace_id,
    status: state,
    occurredAt: new Date(),
    data: {
      ...(ended.data ?? {}),
      ...(context.attempt !== null ? { attempt: context.attempt, retry_of: context.retry_of } : {}),
      ...(ended.status !== state ? { detail_status: ended.status } : {}),
    },
  };
  for (const listener of jobEndListeners()) {
    await listener(deps, event).catch((err: unknown) =>
      deps.logger.error({ err, kind: ended.kind, id: ended.id }, "a listener of a job's end (webhook deliveries) failed"),
    );
  }
}

/** A workflow run that started this job as its collection or analysis step runs its next step. */
async function continueWaitingRuns(deps: Deps, ended: EndedJob, runIds: string[]): Promise<void> {
  for (const runId of runIds) {
    await deps.queues.enqueue("workflow.run.v1", { runId }, { jobId: jobIds.runContinuation(runId, ended.kind, ended.id) });
  }
}
