import { createHash, randomUUID } from "node:crypto";
import type { AppDeps } from "../platform/deps.js";
import { AppError } from "../platform/errors.js";
import { deriveJobId } from "../platform/queues.js";
import { entityForUser } from "../workspaces/access.js";
import { COLLECTOR_PLATFORMS } from "./collectors/types.js";
import { type JobProgress, pendingProgress } from "./progress.js";
import type { CreateJobInput, CreateJobResponse } from "./schemas.js";

/**
 * Creating a collection job: a durable `collection_jobs` row plus a BullMQ job.
 *
 * The row is inserted and the job enqueued inside one database transaction, and the
 * transaction commits only once the queue has accepted the job: if Redis is down the
 * enqueue throws (503) and the insert is rolled back, so no half-created job is left.
 * The unique (user_id, idempotency_key) constraint decides races: a second create with
 * the same key waits on the first one's uncommitted row, then finds it and replays it
 * (same request) or refuses it (different request, 409).
 *
 * The row id and the BullMQ job id are both derived from the caller and the key, so a
 * create retried after a failed commit points at the queue entry it already made.
 */
export type JobRoute = "collection" | "research";

const ROUTE_PATHS: Record<JobRoute, string> = {
  collection: "/agent/v1/ingest/collection/jobs",
  research: "/agent/v1/ingest/research/jobs",
};

/** The URL a client polls for the job (absolute when PUBLIC_BASE_URL is configured). */
export function jobUrl(config: AppDeps["config"], route: JobRoute, jobId: string): string {
  const base = config.PUBLIC_BASE_URL ? config.PUBLIC_BASE_URL.replace(/\/+$/, "") : "";
  return `${base}${ROUTE_PATHS[route]}/${jobId}`;
}

/** A UUID (version-5 layout) derived from stable parts. */
export function derivedUuid(...parts: string[]): string {
  const hex = createHash("sha256").update(parts.join("\u0000")).digest("hex");
  const variant = ((Number.parseInt(hex.slice(16, 17), 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/**
 * The platforms a job collects when the request names none: the entity's platforms
 * that have a collector; all collectors when the entity lists no platform; and, when
 * the entity lists only platforms without a collector, those (each is then recorded
 * as `blocked` with its reason rather than silently skipped).
 */
export function defaultPlatforms(entityPlatforms: string[]): string[] {
  const listed = [...new Set(entityPlatforms)];
  if (listed.length === 0) return [...COLLECTOR_PLATFORMS];
  const collectable = listed.filter((p) => (COLLECTOR_PLATFORMS as readonly string[]).includes(p));
  return collectable.length > 0 ? collectable : listed;
}

/** The request as a canonical string: what "the same request" means for one idempotency key. */
export function requestHash(route: JobRoute, input: CreateJobInput, collectionOnly: boolean): string {
  const canonical = JSON.stringify([
    route,
    input.entity_id,
    input.objective,
    collectionOnly,
    input.questions,
    input.depth,
    [...new Set(input.platforms)].sort(),
  ]);
  return createHash("sha256").update(canonical).digest("hex");
}

interface JobRow {
  id: string;
  entity_id: string;
  request_hash: string;
  status: string;
  analysis_id: string | null;
  route: string;
}

function answer(config: AppDeps["config"], row: JobRow): CreateJobResponse {
  return {
    status: row.status,
    job_id: row.id,
    entity_id: row.entity_id,
    next: jobUrl(config, row.route as JobRoute, row.id),
    analysis_id: row.analysis_id ?? "",
  };
}

const TX_OPTIONS = { maxWait: 10_000, timeout: 15_000 } as const;

export async function createCollectionJob(
  deps: Pick<AppDeps, "db" | "queues" | "config">,
  userId: string,
  input: CreateJobInput,
  route: JobRoute,
): Promise<CreateJobResponse> {
  const entity = await entityForUser(deps.db, userId, input.entity_id);
  const collectionOnly = route === "research" ? false : input.collection_only;
  const requested = [...new Set(input.platforms)];
  const platforms = requested.length > 0 ? requested : defaultPlatforms(entity.platforms);
  const key = input.idempotency_key ?? `auto-${randomUUID()}`;
  const hash = requestHash(route, input, collectionOnly);
  const id = derivedUuid("collection-job", userId, key);
  const queueJobId = deriveJobId("collection", userId, key);
  const progress: JobProgress = Object.fromEntries(platforms.map((p) => [p, pendingProgress()]));

  const created = await deps.db.$transaction(async (tx) => {
    const rows = await tx.$queryRaw<JobRow[]>`
      INSERT INTO collection_jobs (
        id, user_id, entity_id, idempotency_key, request_hash, queue_job_id, route, status,
        objective, questions, depth, platforms, collection_only, progress, updated_at
      ) VALUES (
        ${id}::uuid, ${userId}::uuid, ${entity.id}::uuid, ${key}, ${hash}, ${queueJobId}, ${route}, 'queued',
        ${input.objective}, ${input.questions}::text[], ${input.depth}, ${platforms}::text[], ${collectionOnly},
        ${JSON.stringify(progress)}::jsonb, now()
      )
      ON CONFLICT (user_id, idempotency_key) DO NOTHING
      RETURNING id, entity_id, request_hash, status, analysis_id, route`;
    const row = rows[0];
    if (!row) return undefined;
    // Inside the transaction: a refused enqueue rolls the row back.
    await deps.queues.enqueue("collection.run.v1", { jobId: row.id }, { jobId: queueJobId });
    return row;
  }, TX_OPTIONS);
  if (created) return answer(deps.config, created);

  const rows = await deps.db.$queryRaw<JobRow[]>`
    SELECT id, entity_id, request_hash, status, analysis_id, route FROM collection_jobs
    WHERE user_id = ${userId}::uuid AND idempotency_key = ${key}`;
  const existing = rows[0];
  if (!existing) throw new AppError("conflict", "A concurrent request with this idempotency_key failed; retry the request.");
  if (existing.request_hash !== hash) {
    throw new AppError(
      "idempotency_conflict",
      "This idempotency_key was already used for a different collection job request; send a new idempotency_key.",
    );
  }
  return answer(deps.config, existing);
}
