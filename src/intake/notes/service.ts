import { createHash, randomUUID } from "node:crypto";
import { activeMembershipsOf, requireWriter, writableEntityForUser } from "../../access/workspaces/access.js";
import type { NoteSync } from "../../generated/prisma/client.js";
import { attemptOf } from "../../jobs/attempts.js";
import { jobIds } from "../../jobs/ids.js";
import { assertCancelled, cancelJob, endedChannel } from "../../jobs/lifecycle.js";
import { isLive } from "../../jobs/states.js";
import { submit } from "../../jobs/submit.js";
import { canonicalJson } from "../../platform/canonical.js";
import type { AppDeps } from "../../platform/deps.js";
import { AppError, ERROR_CODES, type ErrorCode, notFound } from "../../platform/errors.js";
import { retryAfterHeader } from "../../platform/http/retry-after.js";
import { secretBoxFor } from "../../platform/secrets.js";
import type { SyncAnswered, SyncInput, SyncParams, SyncPending, SyncResult } from "./schemas.js";

/**
 * The web side of a meeting-note import: record the sync (unique per caller, request_id and
 * attempt), queue one `notes.sync.v1` job for it with the provider key sealed, wait briefly for
 * the job, and answer the imported page, the failure, or "still running". A request_id names its
 * newest attempt; a retry of a failed sync is a new attempt (src/jobs/attempts.ts), the failed one
 * stays failed.
 */
export type SyncDeps = Pick<AppDeps, "db" | "pool" | "queues" | "redis" | "pubsub" | "config" | "logger" | "reads">;

/** The queue job of a sync: one per caller, request_id and attempt. */
export const notesJobId = jobIds.notes;

export type SyncAnswer = { status: 200; body: SyncAnswered } | { status: 202; body: SyncPending };

/** The imported page as answered: the stored result and the attempt that imported it. */
const answered = (row: { result: unknown; attempt: number; retryOf: string | null }): SyncAnswered => ({
  ...(row.result as SyncResult),
  ...attemptOf(row),
});

export const statusPath = (requestId: string) => `/api/meetingnotes/sync/${encodeURIComponent(requestId)}`;

export const syncRequestHash = (params: SyncParams) => createHash("sha256").update(canonicalJson(params)).digest("hex");

const notConfigured = () =>
  new AppError("service_unavailable", "Meeting-note import is not configured on this server: the operator must set SECRETS_KEY.");

/** A stored failure as it is answered: its code and detail, and the provider's Retry-After when it gave one. */
function storedFailure(row: { errorCode: string | null; error: string | null; retryAfterSeconds: number | null }): AppError {
  const known = row.errorCode !== null && row.errorCode in ERROR_CODES ? (row.errorCode as ErrorCode) : "internal_error";
  return new AppError(known, row.error ?? "The meeting-note import failed.", { headers: retryAfterHeader(row.retryAfterSeconds) });
}

/** Starts (or replays) an import into an entity of a workspace where the caller is an editor or above (403 `forbidden` for a viewer). */
export async function startSync(deps: SyncDeps, userId: string, input: SyncInput): Promise<SyncAnswer> {
  // A server that cannot seal the key cannot import for anyone: that answer comes first.
  const box = secretBoxFor(deps.config);
  if (!box) throw notConfigured();
  const entity = await writableEntityForUser(deps.db, userId, input.entity_id, "import meeting notes");
  const requestId = input.request_id ?? randomUUID();
  const params: SyncParams = {
    entity_id: entity.id,
    max_notes: input.max_notes,
    include_transcript: input.include_transcript,
    ...(input.created_after !== undefined ? { created_after: input.created_after } : {}),
    ...(input.folder_id !== undefined ? { folder_id: input.folder_id } : {}),
    ...(input.cursor !== undefined ? { cursor: input.cursor } : {}),
  };
  // The api_key is not part of the request's identity: a retry with a rotated key is the same import.
  const hash = syncRequestHash(params);

  const { row } = await submit<Written>({
    write: async () => {
      const created = await deps.db.$queryRaw<{ id: string }[]>`
        INSERT INTO note_syncs (id, user_id, entity_id, request_id, request_hash, params)
        VALUES (gen_random_uuid(), ${userId}::uuid, ${entity.id}::uuid, ${requestId}, ${hash}, ${JSON.stringify(params)}::jsonb)
        ON CONFLICT (user_id, request_id, attempt) DO NOTHING
        RETURNING id`;
      if (created[0]) return { row: queuedAttempt(created[0].id, 1, null), created: true };
      const existing = await newestAttempt(deps.db, userId, requestId);
      if (!existing) throw new Error("note sync vanished after a conflicting insert");
      if (existing.requestHash !== hash) {
        throw new AppError(
          "idempotency_conflict",
          "This request_id was already used for a different meeting-note import; send a new request_id.",
        );
      }
      if (existing.status === "cancelled") {
        throw new AppError("conflict", "This meeting-note import was cancelled; send a new request_id to import again.", {
          extra: { status: "cancelled" },
        });
      }
      if (existing.status === "failed") {
        // A failed import is final; the retry imports the page again as the next attempt, which
        // starts the page over (the failed attempt stored nothing of it). Of concurrent retries,
        // one creates that attempt; the others answer it.
        const retry = await deps.db.$queryRaw<{ id: string }[]>`
          INSERT INTO note_syncs (id, user_id, entity_id, request_id, request_hash, params, attempt, retry_of)
          SELECT gen_random_uuid(), user_id, entity_id, request_id, request_hash, params, attempt + 1, id
          FROM note_syncs WHERE id = ${existing.id}::uuid AND status = 'failed'
          ON CONFLICT (user_id, request_id, attempt) DO NOTHING
          RETURNING id`;
        if (retry[0]) return { row: queuedAttempt(retry[0].id, existing.attempt + 1, existing.id), created: true };
        const newest = await newestAttempt(deps.db, userId, requestId);
        if (newest) return { row: newest, created: false };
      }
      return { row: existing, created: false };
    },
    // The provider key travels sealed in the job, never in the row.
    enqueue: (sync) =>
      deps.queues.enqueue(
        "notes.sync.v1",
        { syncId: sync.id, credential: box.seal(input.api_key, sync.id) },
        { jobId: notesJobId(userId, requestId, sync.attempt) },
      ),
    // The queue refused (Redis down): the attempt this request created is removed again (a failed
    // attempt it retried was never changed), so the same request_id can be retried.
    undo: (sync) => deps.db.noteSync.deleteMany({ where: { id: sync.id, status: "queued" } }),
    // queued/running: queue again under the same job id, a no-op while the job exists.
    requeueOnReplay: (sync) => isLive(sync.status),
  });
  if (row.status === "completed") return { status: 200, body: answered(row) };
  return waitForSync(deps, row.id, requestId, entity.id);
}

/** What a submit of a sync writes and replays: the attempt the request_id names. */
interface Written {
  id: string;
  status: string;
  result: unknown;
  attempt: number;
  retryOf: string | null;
}

const queuedAttempt = (id: string, attempt: number, retryOf: string | null): Written => ({
  id,
  status: "queued",
  result: null,
  attempt,
  retryOf,
});

/** The caller's newest attempt of a request_id. */
async function newestAttempt(db: AppDeps["db"], userId: string, requestId: string): Promise<(Written & { requestHash: string }) | null> {
  return db.noteSync.findFirst({
    where: { userId, requestId },
    orderBy: { attempt: "desc" },
    select: { id: true, status: true, result: true, attempt: true, retryOf: true, requestHash: true },
  });
}

/**
 * Waits up to NOTES_SYNC_WAIT_MS for the sync to end: subscribed to the sync's end signal
 * (published by the worker once the outcome has committed), the row is read once before
 * waiting and once after the signal or the deadline. Without the relay (Redis down) the
 * row is read again at the deadline.
 */
async function waitForSync(deps: SyncDeps, syncId: string, requestId: string, entityId: string): Promise<SyncAnswer> {
  let signalled: () => void = () => undefined;
  const ended = new Promise<void>((resolve) => {
    signalled = resolve;
  });
  const unsubscribe = await deps.pubsub
    .subscribe(endedChannel(deps.config.REDIS_PREFIX, "note_sync", syncId), () => signalled())
    .catch(() => undefined);
  try {
    let row = await readSync(deps, syncId);
    if (isLive(row.status) && deps.config.NOTES_SYNC_WAIT_MS > 0) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        ended,
        new Promise<void>((resolve) => {
          timer = setTimeout(resolve, deps.config.NOTES_SYNC_WAIT_MS);
        }),
      ]);
      clearTimeout(timer);
      row = await readSync(deps, syncId);
    }
    if (row.status === "completed") return { status: 200, body: answered(row) };
    if (row.status === "failed") throw storedFailure(row);
    if (row.status === "cancelled") {
      throw new AppError("conflict", "This meeting-note import was cancelled.", { extra: { status: "cancelled" } });
    }
    return {
      status: 202,
      body: {
        status: row.status === "running" ? "running" : "queued",
        request_id: requestId,
        entity_id: entityId,
        ...attemptOf(row),
        next: statusPath(requestId),
      },
    };
  } finally {
    await unsubscribe?.();
  }
}

async function readSync(deps: SyncDeps, syncId: string) {
  const row = await deps.db.noteSync.findUnique({
    where: { id: syncId },
    select: { status: true, result: true, error: true, errorCode: true, retryAfterSeconds: true, attempt: true, retryOf: true },
  });
  if (!row) throw notFound("Meeting-note sync");
  return row;
}

/**
 * The sync a request id names for the caller: the caller's own newest attempt, else the newest one
 * with that request id into an entity of a workspace the caller is a member of (whoever started
 * it), with that workspace; 404 when there is none.
 */
async function visibleSync(db: AppDeps["db"], userId: string, requestId: string): Promise<{ row: NoteSync; workspaceId: string }> {
  const found = await db.$queryRaw<{ id: string; workspace_id: string }[]>`
    SELECT s.id, e.workspace_id FROM note_syncs s
    JOIN entities e ON e.id = s.entity_id
    JOIN ${activeMembershipsOf(userId)} m ON m.workspace_id = e.workspace_id
    WHERE s.request_id = ${requestId}
    ORDER BY s.user_id = ${userId}::uuid DESC, CASE WHEN s.user_id = ${userId}::uuid THEN s.attempt END DESC NULLS LAST,
      s.created_at DESC, s.attempt DESC, s.id
    LIMIT 1`;
  const row = found[0] ? await db.noteSync.findUnique({ where: { id: found[0].id } }) : null;
  if (!found[0] || !row) throw notFound("Meeting-note sync");
  return { row, workspaceId: found[0].workspace_id };
}

/**
 * Cancels a sync the caller can see (see visibleSync), whoever started it: editors and above of
 * its workspace may (a viewer gets 403 `forbidden` before anything changes). A queued one leaves
 * the queue (with its sealed credential); a running one stops before it stores its page (the page
 * is one transaction, so nothing of it is kept). Cancelling twice answers the same; a finished
 * sync is a 409.
 */
export async function cancelSync(deps: SyncDeps, userId: string, requestId: string) {
  const { row, workspaceId } = await visibleSync(deps.db, userId, requestId);
  await requireWriter(deps.db, userId, workspaceId, "cancel meeting-note imports");
  assertCancelled("note_sync", await cancelSyncRow(deps, row));
  return describeSync(await deps.db.noteSync.findUniqueOrThrow({ where: { id: row.id } }));
}

/**
 * The cancel of one sync row, whoever asks (its route, a deletion): the transition, its queue entry
 * (named after the user who started the sync, not the caller) and its end announced.
 */
export function cancelSyncRow(
  deps: Pick<AppDeps, "db" | "pool" | "queues" | "redis" | "config" | "logger" | "reads">,
  sync: { id: string; userId: string; requestId: string; attempt: number; entityId: string },
  detail?: string,
) {
  return cancelJob(deps, {
    kind: "note_sync",
    id: sync.id,
    detail,
    entry: { queue: deps.queues.get("notes-sync"), id: notesJobId(sync.userId, sync.requestId, sync.attempt) },
    data: { entity_id: sync.entityId, request_id: sync.requestId },
  });
}

/** The state of a sync the caller can see by its request id (see visibleSync); otherwise 404. */
export async function syncStatus(deps: Pick<AppDeps, "db">, userId: string, requestId: string) {
  return describeSync((await visibleSync(deps.db, userId, requestId)).row);
}

function describeSync(row: NoteSync) {
  const { requestId } = row;
  if (row.status === "completed") return answered(row);
  if (row.status === "cancelled") {
    return { status: "cancelled" as const, request_id: requestId, entity_id: row.entityId, ...attemptOf(row) };
  }
  if (row.status === "failed") {
    const failure = storedFailure(row);
    return {
      status: "failed" as const,
      request_id: requestId,
      entity_id: row.entityId,
      ...attemptOf(row),
      error: { code: failure.code, detail: failure.message },
    };
  }
  return {
    status: row.status === "running" ? ("running" as const) : ("queued" as const),
    request_id: requestId,
    entity_id: row.entityId,
    ...attemptOf(row),
    next: statusPath(requestId),
  };
}
