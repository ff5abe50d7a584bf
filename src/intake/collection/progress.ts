import { JobCancelled } from "../../jobs/cancellation.js";
import { type Db, Prisma } from "../../platform/db.js";

/**
 * Per-platform progress of a collection job, kept in `collection_jobs.progress` (one key
 * per platform). The worker writes it after every page, so a job that is killed resumes
 * from the stored cursor, and a poll reads it as the job's live state.
 *
 * Every write is fenced by the job's `attempts` counter: each run increments it when it
 * claims the job, and a write whose fence no longer matches is refused. A run that lost
 * its queue lock (its worker stalled or died) can therefore never overwrite the progress
 * of the run that took over.
 *
 * A cancel settles every platform that is not final to `cancelled` in the statement that
 * cancels the job (`CANCEL_PLATFORM_PROGRESS`). A run still going keeps only its counts
 * and cursor from then on: its writes never move a platform of a cancelled job back to
 * `running` or on to a settled state.
 */
export const PLATFORM_RUN_STATUSES = ["pending", "running", "retrying", "completed", "blocked", "failed", "cancelled"] as const;
export type PlatformRunStatus = (typeof PLATFORM_RUN_STATUSES)[number];

/** The platform states no run leaves (a requeue reopens `failed` ones). */
export const FINAL_PLATFORM_STATUSES = ["completed", "blocked", "failed", "cancelled"] as const satisfies readonly PlatformRunStatus[];

export interface TargetProgress {
  target: string;
  target_type: string;
  status: string;
  items_found: number;
  items_stored: number;
  error?: string;
}

export interface PlatformProgress {
  status: PlatformRunStatus;
  coverage_state: string | null;
  reason: string | null;
  error: string | null;
  pages: number;
  found: number;
  stored: number;
  inserted: number;
  deduplicated: number;
  cursor: string | null;
  cursor_start: string | null;
  reached_end: boolean;
  /** Sticky partial state reported by the upstream (see CollectedPage.partial). */
  partial: "bounded" | "sampled" | null;
  query: string | null;
  targets: TargetProgress[];
  started_at: string | null;
  finished_at: string | null;
}

export type JobProgress = Record<string, PlatformProgress>;

export function pendingProgress(): PlatformProgress {
  return {
    status: "pending",
    coverage_state: null,
    reason: null,
    error: null,
    pages: 0,
    found: 0,
    stored: 0,
    inserted: 0,
    deduplicated: 0,
    cursor: null,
    cursor_start: null,
    reached_end: false,
    partial: null,
    query: null,
    targets: [],
    started_at: null,
    finished_at: null,
  };
}

/** Reads a stored progress object, filling fields a row written by an older version may lack. */
export function readProgress(value: unknown, platforms: string[]): JobProgress {
  const stored = (value && typeof value === "object" ? value : {}) as Record<string, Partial<PlatformProgress>>;
  const out: JobProgress = {};
  for (const p of platforms) out[p] = { ...pendingProgress(), ...(stored[p] ?? {}) };
  return out;
}

export const isSettled = (p: PlatformProgress) => (FINAL_PLATFORM_STATUSES as readonly string[]).includes(p.status);

/** A timestamptz as a JSON string, as `Date.toISOString()` writes it. */
const isoJson = (sql: string) => `to_jsonb(to_char(${sql} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))`;

/**
 * The SET clause a job's cancel adds to its `cancelled` transition (see markCancelled): every
 * platform of the job whose progress is not final (pending, running, retrying, or not written
 * yet) becomes `cancelled` with its `finished_at`; counts and cursors stay.
 */
export const CANCEL_PLATFORM_PROGRESS = `progress = progress || COALESCE((
    SELECT jsonb_object_agg(p.platform, COALESCE(progress -> p.platform, '{}'::jsonb)
      || jsonb_build_object('status', 'cancelled', 'finished_at', ${isoJson("now()")}))
    FROM unnest(platforms) AS p(platform)
    WHERE COALESCE(progress -> p.platform ->> 'status', 'pending') NOT IN (${FINAL_PLATFORM_STATUSES.map((s) => `'${s}'`).join(", ")})
  ), '{}'::jsonb)`;

export class FenceLost extends Error {
  override name = "FenceLost";
  constructor(jobId: string) {
    super(`collection job ${jobId} was claimed by a newer run; this run stops`);
  }
}

/**
 * The fenced write of one platform's progress: a statement that returns a row when it applied.
 * It applies only while this run owns the job and the job is running, so a settle (and the
 * coverage record written with it) never lands on a cancelled job. `completes`: the job ends with
 * this write (its last platform settling, with no analysis to start), in the same statement.
 */
export const platformProgressUpdate = (jobId: string, fence: number, platform: string, progress: PlatformProgress, completes = false) =>
  Prisma.sql`
    UPDATE collection_jobs
    SET progress = jsonb_set(progress, ARRAY[${platform}]::text[], ${JSON.stringify(progress)}::jsonb, true), updated_at = now()${
      completes ? Prisma.raw(", status = 'completed', error = NULL, finished_at = now()") : Prisma.empty
    }
    WHERE id = ${jobId}::uuid AND attempts = ${fence} AND status = 'running'
    RETURNING 1`;

/**
 * Writes one platform's progress if this run still owns the job. On a job cancelled meanwhile,
 * the counts and cursor are still written (what the run stored stays accounted for) but the
 * platform stays `cancelled` with the cancel's `finished_at`, and JobCancelled is thrown.
 * Throws FenceLost when a newer run has claimed the job (or it left `running` otherwise).
 */
export async function savePlatformProgress(
  db: Db,
  jobId: string,
  fence: number,
  platform: string,
  progress: PlatformProgress,
): Promise<void> {
  const value = JSON.stringify(progress);
  const rows = await db.$queryRaw<{ status: string }[]>`
    UPDATE collection_jobs
    SET progress = jsonb_set(progress, ARRAY[${platform}]::text[],
        CASE WHEN status = 'running' THEN ${value}::jsonb
        ELSE ${value}::jsonb || jsonb_build_object(
          'status', 'cancelled',
          'finished_at', COALESCE(NULLIF(progress -> ${platform} -> 'finished_at', 'null'::jsonb), ${Prisma.raw(isoJson("finished_at"))})
        ) END, true),
      updated_at = now()
    WHERE id = ${jobId}::uuid AND attempts = ${fence} AND status IN ('running', 'cancelled')
    RETURNING status`;
  if (!rows[0]) throw new FenceLost(jobId);
  if (rows[0].status === "cancelled") throw new JobCancelled("The collection job");
}

/** Throws FenceLost when a newer run has claimed the job, JobCancelled when it was cancelled. */
export async function assertFence(db: Db, jobId: string, fence: number): Promise<void> {
  const rows = await db.$queryRaw<{ attempts: number; status: string }[]>`
    SELECT attempts, status FROM collection_jobs WHERE id = ${jobId}::uuid`;
  if (rows[0]?.attempts !== fence) throw new FenceLost(jobId);
  if (rows[0].status === "cancelled") throw new JobCancelled("The collection job");
}
