import { type Db, Prisma } from "../platform/db.js";

/**
 * Per-platform progress of a collection job, kept in `collection_jobs.progress` (one key
 * per platform). The worker writes it after every page, so a job that is killed resumes
 * from the stored cursor, and a poll reads it as the job's live state.
 *
 * Every write is fenced by the job's `attempts` counter: each run increments it when it
 * claims the job, and a write whose fence no longer matches is refused. A run that lost
 * its queue lock (its worker stalled or died) can therefore never overwrite the progress
 * of the run that took over.
 */
export type PlatformRunStatus = "pending" | "running" | "retrying" | "completed" | "blocked" | "failed";

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

export const isSettled = (p: PlatformProgress) => p.status === "completed" || p.status === "blocked" || p.status === "failed";

export class FenceLost extends Error {
  override name = "FenceLost";
  constructor(jobId: string) {
    super(`collection job ${jobId} was claimed by a newer run; this run stops`);
  }
}

/** The fenced write of one platform's progress: a statement that returns a row when it applied. */
export const platformProgressUpdate = (jobId: string, fence: number, platform: string, progress: PlatformProgress) => Prisma.sql`
    UPDATE collection_jobs
    SET progress = jsonb_set(progress, ARRAY[${platform}]::text[], ${JSON.stringify(progress)}::jsonb, true), updated_at = now()
    WHERE id = ${jobId}::uuid AND attempts = ${fence}
    RETURNING 1`;

/** Writes one platform's progress if this run still owns the job. */
export async function savePlatformProgress(
  db: Db,
  jobId: string,
  fence: number,
  platform: string,
  progress: PlatformProgress,
): Promise<void> {
  const updated = await db.$executeRaw(platformProgressUpdate(jobId, fence, platform, progress));
  if (updated === 0) throw new FenceLost(jobId);
}

/** Throws FenceLost when a newer run has claimed the job. */
export async function assertFence(db: Db, jobId: string, fence: number): Promise<void> {
  const rows = await db.$queryRaw<{ attempts: number }[]>`SELECT attempts FROM collection_jobs WHERE id = ${jobId}::uuid`;
  if (rows[0]?.attempts !== fence) throw new FenceLost(jobId);
}
