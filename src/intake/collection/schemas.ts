import { z } from "zod";
import { AttemptFields } from "../../jobs/attempts.js";
import { optional, pathId, withDefault } from "../../platform/validation.js";
import { RemovedAfter } from "../coverage/schemas.js";
import { PLATFORM_RUN_STATUSES } from "./progress.js";

/**
 * Collection jobs (spec operation 2) and the older research-job route. Optional fields
 * accept null as absent; unknown fields are ignored. `entity_id` and `objective` are
 * required; every other field has a default.
 */
export const REQUESTABLE_PLATFORMS = [
  "twitter",
  "linkedin",
  "reddit",
  "youtube",
  "tiktok",
  "instagram",
  "hackernews",
  "producthunt",
  "web",
] as const;
export type RequestablePlatform = (typeof REQUESTABLE_PLATFORMS)[number];

export const IDEMPOTENCY_KEY_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:-]+$/;

export const JOB_STATUSES = ["queued", "running", "completed", "failed", "cancelled"] as const;
export type StoredJobStatus = (typeof JOB_STATUSES)[number];
/** What a poll answers: the stored status, or `stalled` when the queue lost the job. */
export type JobStatus = StoredJobStatus | "stalled";

export const CreateJobBody = z.object({
  entity_id: z.string().min(1).max(100),
  objective: z.string().min(3).max(1000),
  collection_only: withDefault(z.boolean(), false),
  questions: withDefault(z.array(z.string().min(1).max(1000)).max(5), []),
  depth: withDefault(z.enum(["brief", "deep"]), "brief"),
  platforms: withDefault(z.array(z.enum(REQUESTABLE_PLATFORMS)).max(9), []),
  idempotency_key: optional(z.string().min(8).max(128).regex(IDEMPOTENCY_KEY_PATTERN)),
});
export type CreateJobInput = z.output<typeof CreateJobBody>;

export const JobIdParams = z.object({ job_id: pathId("Collection job") });

export const CreateJobResponse = z.object({
  status: z.string().describe("queued, running, completed, failed or cancelled: the job's status when answered"),
  job_id: z.string(),
  entity_id: z.string(),
  next: z.string().describe("Where to poll the job"),
  analysis_id: z.string().describe("The analysis this job continues into; empty until it is created"),
});
export type CreateJobResponse = z.infer<typeof CreateJobResponse>;

const Count = z.number().int();

export const PlatformStatus = z.object({
  status: z.enum(PLATFORM_RUN_STATUSES).describe("cancelled: the job was cancelled before this platform settled (counts and cursor kept)"),
  coverage_state: z.string().nullable(),
  reason: z.string().nullable().describe("Why the platform is blocked, or why its coverage is partial"),
  error: z.string().nullable(),
  pages: Count,
  found: Count,
  stored: Count,
  inserted: Count,
  deduplicated: Count,
  cursor: z.string().nullable().describe("The next page the collector would read (kept so a resumed job continues)"),
  reached_end: z.boolean(),
  query: z.string().nullable(),
  started_at: z.string().nullable(),
  finished_at: z.string().nullable(),
  removed_after: RemovedAfter.nullable().describe(
    "Rows this platform's run stored that were removed afterwards (deleted, erased, retention), from its coverage record; null until the platform settles",
  ),
});

export const JobStatusResponse = z.object({
  job_id: z.string(),
  status: z.enum([...JOB_STATUSES, "stalled"]),
  stalled_reason: z.string().nullable(),
  entity_id: z.string(),
  route: z.enum(["collection", "research"]),
  objective: z.string(),
  questions: z.array(z.string()),
  depth: z.string(),
  collection_only: z.boolean(),
  platforms: z.array(z.string()),
  progress: z.record(z.string(), PlatformStatus),
  counts: z.object({
    found: Count,
    stored: Count,
    inserted: Count,
    deduplicated: Count,
    removed: Count.describe("Rows the job stored that were removed afterwards (sum of the platforms' removed_after.rows)"),
  }),
  coverage: z.record(z.string(), z.string().nullable()),
  errors: z.array(z.object({ platform: z.string().nullable(), detail: z.string() })),
  analysis_id: z.string(),
  next: z.string(),
  attempts: Count.describe("How many times a worker has taken up this job"),
  ...AttemptFields,
  created_at: z.string(),
  started_at: z.string().nullable(),
  finished_at: z.string().nullable(),
});
export type JobStatusResponse = z.infer<typeof JobStatusResponse>;
