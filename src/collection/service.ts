import { createHash, randomUUID } from "node:crypto";
import type { Db } from "../platform/db.js";
import type { AppDeps } from "../platform/deps.js";
import { AppError, notFound } from "../platform/errors.js";
import { deriveJobId } from "../platform/queues.js";
import { isUuid } from "../workspaces/access.js";
import { COLLECTOR_PLATFORMS } from "./collectors/types.js";
import { type JobProgress, pendingProgress } from "./progress.js";
import type { CreateJobInput, CreateJobResponse } from "./schemas.js";

/**
 * Creating a collection job: a BullMQ job plus a durable `collection_jobs` row.
 *
 * The queue is written first and the row second. If Redis is down the enqueue throws
 * (503) before anything is stored, so a refused create never leaves a half-created job:
 * every row has had its queue entry accepted. The opposite half (a queue entry whose row
 * insert then failed) is inert: the worker waits briefly for the row and otherwise gives
 * the entry up. The unique (user_id, idempotency_key) constraint decides concurrent
 * creates with one key: one insert wins, the others find its row and replay it (same
 * request) or refuse it (different request, 409).
 *
 * The row id and the BullMQ job id are both derived from the caller and the key, so
 * every create with one key names the same queue entry (BullMQ ignores a second add of
 * an id it holds) and a retried create finds the entry its first attempt made.
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

export async function createCollectionJob(
  deps: Pick<AppDeps, "db" | "queues" | "config">,
  userId: string,
  input: CreateJobInput,
  route: JobRoute,
): Promise<CreateJobResponse> {
  const entity = await visibleEntity(deps.db, userId, input.entity_id);
  const collectionOnly = route === "research" ? false : input.collection_only;
  const requested = [...new Set(input.platforms)];
  const platforms = requested.length > 0 ? requested : defaultPlatforms(entity.platforms);
  const key = input.idempotency_key ?? `auto-${randomUUID()}`;
  const hash = requestHash(route, input, collectionOnly);
  const id = derivedUuid("collection-job", userId, key);
  const queueJobId = deriveJobId("collection", userId, key);
  const progress: JobProgress = Object.fromEntries(platforms.map((p) => [p, pendingProgress()]));

  // 1. The queue first: if Redis refuses, nothing has been written (503).
  try {
    await deps.queues.enqueue("collection.run.v1", { jobId: id }, { jobId: queueJobId });
  } catch (err) {
    // A replay of a job that exists is answered from Postgres even while Redis is down.
    const existing = await findByKey(deps.db, userId, key);
    if (existing) return replay(deps.config, existing, hash);
    throw err;
  }
  // 2. The row; the unique (user_id, idempotency_key) constraint decides concurrent creates.
  const rows = await deps.db.$queryRaw<JobRow[]>`
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
  if (rows[0]) return answer(deps.config, rows[0]);

  const existing = await findByKey(deps.db, userId, key);
  if (!existing) throw new AppError("conflict", "A concurrent request with this idempotency_key failed; retry the request.");
  return replay(deps.config, existing, hash);
}

async function findByKey(db: Db, userId: string, key: string): Promise<JobRow | undefined> {
  const rows = await db.$queryRaw<JobRow[]>`
    SELECT id, entity_id, request_hash, status, analysis_id, route FROM collection_jobs
    WHERE user_id = ${userId}::uuid AND idempotency_key = ${key}`;
  return rows[0];
}

function replay(config: AppDeps["config"], existing: JobRow, hash: string): CreateJobResponse {
  if (existing.request_hash !== hash) {
    throw new AppError(
      "idempotency_conflict",
      "This idempotency_key was already used for a different collection job request; send a new idempotency_key.",
    );
  }
  return answer(config, existing);
}

/** The entity (id and platforms) if the caller is a member of its workspace; otherwise 404. */
async function visibleEntity(db: Db, userId: string, entityId: string): Promise<{ id: string; platforms: string[] }> {
  if (!isUuid(entityId)) throw notFound("Entity");
  const rows = await db.$queryRaw<{ id: string; platforms: string[] }[]>`
    SELECT e.id, e.platforms FROM entities e
    WHERE e.id = ${entityId}::uuid
      AND EXISTS (SELECT 1 FROM workspace_members m WHERE m.workspace_id = e.workspace_id AND m.user_id = ${userId}::uuid)`;
  if (!rows[0]) throw notFound("Entity");
  return rows[0];
}
