import { createHash, randomUUID } from "node:crypto";
import { isUuid, writableEntityForUser } from "../../access/workspaces/access.js";
import { jobIds } from "../../jobs/ids.js";
import { submit } from "../../jobs/submit.js";
import type { Db } from "../../platform/db.js";
import type { AppDeps } from "../../platform/deps.js";
import { AppError, notFound } from "../../platform/errors.js";
import { COLLECTOR_PLATFORMS } from "./collectors/types.js";
import { insertJob, type JobRow } from "./insert.js";
import type { CreateJobInput, CreateJobResponse } from "./schemas.js";

/**
 * Creating a collection job: a durable `collection_jobs` row plus a BullMQ job. Only editors
 * and above of the entity's workspace create one: a viewer is a 403 `forbidden`, a non-member
 * a 404, before anything is written or replayed.
 *
 * One statement inserts the row, checking in the same statement that the caller may see
 * the entity and resolving the default platforms from it; the creates a process gets while
 * an insert is in flight share the next one (insert.ts). Then the job is enqueued. If
 * Redis refuses, the row is deleted again and the create answers 503, so a refused create
 * leaves no half-created job. (Only a web process dying between the two steps leaves a
 * row without a queue entry: a poll shows it as `stalled`, a replay of the create or
 * `requeue-stalled` re-enqueues it.) The unique (user_id, idempotency_key) constraint
 * decides concurrent creates with one key: one insert wins, the others find its row and
 * replay it (same request) or refuse it (different request, 409). The row id is derived
 * from the same caller and key, so a racing insert may meet the winner on the primary key
 * before the key's index: the insert's `ON CONFLICT` names no constraint, so either
 * collision is the same "key taken". A replay of a job that
 * is still queued enqueues it again (a no-op while the queue holds it), and answers 503
 * while the queue is unavailable rather than vouching for a job it cannot confirm.
 *
 * The row id and the BullMQ job id are both derived from the caller and the key, so
 * every create with one key names the same queue entry (BullMQ ignores a second add of
 * an id it holds).
 *
 * A key names its newest attempt: an operator's requeue-job of a failed job (src/intake/collection/
 * requeue.ts) makes attempt n + 1 of the same (caller, key), a new job with its own id and queue
 * job id, and a replay of the create then answers that job.
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
 * as `blocked` with its reason rather than silently skipped). The insert (insert.ts)
 * evaluates the same rule in SQL.
 */
export function defaultPlatforms(entityPlatforms: string[]): string[] {
  const listed = [...new Set(entityPlatforms)];
  if (listed.length === 0) return [...COLLECTOR_PLATFORMS];
  const collectable = listed.filter((p) => (COLLECTOR_PLATFORMS as readonly string[]).includes(p));
  return collectable.length > 0 ? collectable : listed;
}

/**
 * What creates a collection job, whoever asks: the HTTP routes, the MCP tool and workflow runs
 * build one of these. It carries no HTTP-only bounds (a workflow run's question may be shorter
 * than the route's minimum objective).
 */
export interface CollectionCommand {
  route: JobRoute;
  entityId: string;
  objective: string;
  questions: string[];
  depth: "brief" | "deep";
  platforms: string[];
  /** Forced false on the research route. */
  collectionOnly: boolean;
  idempotencyKey?: string | undefined;
}

/** The command a create request body stands for. */
export function commandFromBody(input: CreateJobInput, route: JobRoute): CollectionCommand {
  return {
    route,
    entityId: input.entity_id,
    objective: input.objective,
    questions: input.questions,
    depth: input.depth,
    platforms: input.platforms,
    collectionOnly: route === "research" ? false : input.collection_only,
    idempotencyKey: input.idempotency_key,
  };
}

/** The request as a canonical string: what "the same request" means for one idempotency key. */
export function requestHash(command: CollectionCommand): string {
  const canonical = JSON.stringify([
    command.route,
    command.entityId,
    command.objective,
    command.collectionOnly,
    command.questions,
    command.depth,
    [...new Set(command.platforms)].sort(),
  ]);
  return createHash("sha256").update(canonical).digest("hex");
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

/**
 * `forRun`: the job is a step of a workflow run, authorised when the run started, so it goes on for a
 * starter who has since left the workspace or lost the editor role (their running work finishes).
 */
export async function createCollectionJob(
  deps: Pick<AppDeps, "db" | "pool" | "queues" | "config">,
  userId: string,
  command: CollectionCommand,
  { forRun = false }: { forRun?: boolean } = {},
): Promise<CreateJobResponse> {
  // An id that is not a uuid names no entity (the insert would refuse its cast).
  if (!isUuid(command.entityId)) throw notFound("Entity");
  const { route, collectionOnly } = command;
  const requested = [...new Set(command.platforms)];
  const key = command.idempotencyKey ?? `auto-${randomUUID()}`;
  const hash = requestHash(command);
  const id = derivedUuid("collection-job", userId, key);
  const queueJobId = jobIds.collection(userId, key);
  // The row, written with the creates that come at once (insert.ts), if the caller may write there.
  const insert = () =>
    insertJob(deps.pool, {
      id,
      user_id: userId,
      entity_id: command.entityId,
      idempotency_key: key,
      request_hash: hash,
      queue_job_id: queueJobId,
      route,
      objective: command.objective,
      questions: command.questions,
      depth: command.depth,
      requested,
      collection_only: collectionOnly,
      for_run: forRun,
    });

  const { row } = await submit<JobRow>({
    write: async () => {
      const inserted = await insert();
      if (inserted) return { row: inserted, created: true };
      // No row inserted: the key is taken, or the caller may not write there. The role is checked
      // again before a replay answers (a member since demoted gets 403, not the stored job); a new
      // create pays one statement.
      if (!forRun) await writableEntityForUser(deps.db, userId, command.entityId, "start collection and research jobs");
      const existing = await findByKey(deps.db, userId, key);
      if (!existing) throw notFound("Entity");
      if (existing.request_hash !== hash) {
        throw new AppError(
          "idempotency_conflict",
          "This idempotency_key was already used for a different collection job request; send a new idempotency_key.",
        );
      }
      return { row: existing, created: false };
    },
    // The row's own queue job id: a replay may find a later attempt, whose id names its attempt.
    enqueue: (job) => deps.queues.enqueue("collection.run.v1", { jobId: job.id }, { jobId: job.queue_job_id }),
    undo: (job) => deps.db.$executeRaw`DELETE FROM collection_jobs WHERE id = ${job.id}::uuid AND status = 'queued' AND attempts = 0`,
    // A replay of a job still queued heals a lost queue entry, and answers 503 while the queue is down.
    requeueOnReplay: (job) => job.status === "queued",
  });
  return answer(deps.config, row);
}

/** The newest attempt of the caller's key. */
async function findByKey(db: Db, userId: string, key: string): Promise<JobRow | undefined> {
  const rows = await db.$queryRaw<JobRow[]>`
    SELECT id, entity_id, request_hash, status, analysis_id, route, queue_job_id FROM collection_jobs
    WHERE user_id = ${userId}::uuid AND idempotency_key = ${key}
    ORDER BY attempt DESC LIMIT 1`;
  return rows[0];
}
