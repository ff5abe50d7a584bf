import { JobCancelled, rowStatus, watchJob } from "../../jobs/cancellation.js";
import { type EndedJob, endedWith } from "../../jobs/lifecycle.js";
import type { JobDeps } from "../../jobs/registry.js";
import { isLive } from "../../jobs/states.js";
import type { DbTx, Prisma } from "../../platform/db.js";
import type { AppDeps } from "../../platform/deps.js";
import { AppError, type ErrorCode } from "../../platform/errors.js";
import { parseRetryAfterSeconds, retryAfterHeader } from "../../platform/http/retry-after.js";
import { secretBoxFor } from "../../platform/secrets.js";
import type { IngestResponse } from "../ingest/schemas.js";
import { IngestRequestSchema } from "../ingest/schemas.js";
import { ingestContentWith } from "../ingest/service.js";
import { noteSource, PLATFORM, SUMMARY_KIND, summaryOf } from "./mapping.js";
import { MeetingNotesClient, MeetingNotesError, type Note, PROVIDER_NAME } from "./provider.js";
import { type ImportedNote, type SyncParams, SyncParams as SyncParamsSchema, type SyncResult } from "./schemas.js";

/**
 * The notes-sync job: fetch one page of notes (and each note, with its transcript when
 * asked) from the provider, and only when every fetch succeeded store the page: one
 * ingest call (note rows + utterance rows) whose transaction also stores the summaries as
 * knowledge and the sync's answer, so a page is stored whole or not at all. The clear api_key lives only in this function's
 * memory; it is not logged, stored or returned.
 */
export type NotesDeps = Pick<AppDeps, "db" | "pool" | "queues" | "redis" | "pubsub" | "logger" | "config" | "reads">;

/**
 * How a provider failure is answered (DESIGN.md §2: 502 bad answer, 503 unavailable). A 503
 * carries the provider's own Retry-After when it gave one; otherwise the error handler's
 * default for an unavailable upstream applies.
 */
export function providerFailure(err: MeetingNotesError): AppError {
  switch (err.kind) {
    case "unauthorized":
      return new AppError(
        "provider_unauthorized",
        `${err.message} Check the ${PROVIDER_NAME} api_key; this is not a credential error of this service.`,
      );
    case "unavailable":
      return new AppError("upstream_unavailable", err.message);
    case "rate_limited":
      return new AppError("upstream_unavailable", err.message, { headers: retryAfterHeader(err.details.retryAfterSeconds) });
    case "bad_status":
      return err.details.status === 503
        ? new AppError("upstream_unavailable", err.message, { headers: retryAfterHeader(err.details.retryAfterSeconds) })
        : new AppError("upstream_error", err.message);
    case "malformed":
      return new AppError("upstream_error", err.message);
  }
}

/**
 * Marks a sync failed with an answerable error (and its Retry-After, if any), unless it already ended;
 * answers the end it wrote (null when the sync had ended).
 */
export async function failSync(deps: JobDeps, sync: { id: string; entityId: string }, error: AppError): Promise<EndedJob | null> {
  const failed = await deps.db.noteSync.updateMany({
    where: { id: sync.id, status: { in: ["queued", "running"] } },
    data: {
      status: "failed",
      errorCode: error.code,
      error: error.message,
      retryAfterSeconds: parseRetryAfterSeconds(error.headers?.["Retry-After"]) ?? null,
      finishedAt: new Date(),
    },
  });
  if (failed.count === 0) return null;
  return { kind: "note_sync", id: sync.id, status: "failed", data: { entity_id: sync.entityId, error: error.code } };
}

const POOL = 4;

async function fetchPage(client: MeetingNotesClient, params: SyncParams) {
  const page = await client.listNotes({
    pageSize: params.max_notes,
    cursor: params.cursor,
    createdAfter: params.created_after,
    folderId: params.folder_id,
  });
  if (page.notes.length > params.max_notes) {
    throw new MeetingNotesError("malformed", `The ${PROVIDER_NAME} provider answered more notes than the page size asked for.`);
  }
  const ids = page.notes.map((n) => n.id);
  if (new Set(ids).size !== ids.length) {
    throw new MeetingNotesError("malformed", `The ${PROVIDER_NAME} provider listed the same note twice in one page.`);
  }
  const notes: Note[] = new Array(ids.length);
  let next = 0;
  const worker = async () => {
    while (next < ids.length) {
      const i = next++;
      notes[i] = await client.getNote(ids[i] as string, { includeTranscript: params.include_transcript });
    }
  };
  await Promise.all(Array.from({ length: Math.min(POOL, ids.length) }, worker));
  return { notes, hasMore: page.hasMore, cursor: page.hasMore ? page.cursor : null };
}

export interface RunOptions {
  /** Test seam: the provider client options beyond base URL, key and timeout. */
  client?: Partial<ConstructorParameters<typeof MeetingNotesClient>[0]>;
}

export type RunOutcome =
  | { status: "completed"; result: SyncResult }
  | { status: "failed"; code: ErrorCode }
  | { status: "skipped" }
  | { status: "cancelled" };

export async function runNoteSync(
  deps: NotesDeps,
  payload: { syncId: string; credential: string },
  options: RunOptions = {},
): Promise<RunOutcome> {
  const sync = await deps.db.noteSync.findUnique({ where: { id: payload.syncId } });
  if (!sync || !isLive(sync.status)) return { status: "skipped" };

  const fail = async (error: AppError): Promise<RunOutcome> => {
    const ended = await failSync(deps, sync, error);
    deps.logger.warn({ syncId: sync.id, code: error.code }, "meeting-note sync failed");
    return endedWith({ status: "failed", code: error.code }, ended);
  };

  const box = secretBoxFor(deps.config);
  if (!box)
    return fail(new AppError("service_unavailable", "Meeting-note import is not configured on this server (SECRETS_KEY is not set)."));
  let apiKey: string;
  try {
    apiKey = box.open(payload.credential, sync.id);
  } catch {
    return fail(new AppError("internal_error", "The sealed provider credential of this sync could not be opened; send the request again."));
  }

  const paramsParsed = SyncParamsSchema.safeParse(sync.params);
  if (!paramsParsed.success) return fail(new AppError("internal_error", "The stored parameters of this sync are invalid."));
  const params = paramsParsed.data;
  const entity = await deps.db.entity.findUnique({ where: { id: params.entity_id }, select: { id: true, workspaceId: true } });
  if (!entity) return fail(new AppError("not_found", "Entity was not found."));

  await deps.db.noteSync.updateMany({ where: { id: sync.id, status: "queued" }, data: { status: "running" } });
  const status = rowStatus(deps.db, "note_sync", sync.id);
  const cancel = watchJob(deps, "note_sync", sync.id, "The meeting-note sync");
  const client = new MeetingNotesClient({
    baseUrl: deps.config.MEETINGNOTES_API_URL,
    apiKey,
    timeoutMs: deps.config.MEETINGNOTES_TIMEOUT_MS,
    signal: cancel.signal,
    ...options.client,
  });

  try {
    await cancel.check();
    const page = await fetchPage(client, params);
    await cancel.check();
    // The page is stored in one transaction that refuses a sync no longer live: a cancel
    // that wins the race leaves nothing of the page behind.
    const result = await storePage(deps, entity, sync, params, page);
    return endedWith(
      { status: "completed", result },
      {
        kind: "note_sync",
        id: sync.id,
        status: "completed",
        data: { entity_id: entity.id, request_id: sync.requestId, imported: result.imported },
      },
    );
  } catch (err) {
    if (err instanceof JobCancelled || cancel.signal.aborted || (await status()) === "cancelled") return { status: "cancelled" };
    if (err instanceof MeetingNotesError) return fail(providerFailure(err));
    if (err instanceof AppError) return fail(err);
    // Unexpected: retried; the worker runtime fails the sync (failLastAttempt) when no attempt follows.
    throw err;
  } finally {
    cancel.stop();
  }
}

/** A sync whose last attempt failed on an unexpected error: failed for good; answers the end it wrote. */
export async function failLastAttempt(deps: NotesDeps, syncId: string): Promise<EndedJob | null> {
  const sync = await deps.db.noteSync.findUnique({ where: { id: syncId }, select: { id: true, entityId: true } });
  return sync ? failSync(deps, sync, new AppError("internal_error", "The meeting-note import failed; it has been logged.")) : null;
}

async function storePage(
  deps: NotesDeps,
  entity: { id: string; workspaceId: string },
  sync: { id: string; requestId: string },
  params: SyncParams,
  page: { notes: Note[]; hasMore: boolean; cursor: string | null },
): Promise<SyncResult> {
  const sources = page.notes.map((note) => noteSource(note, params.include_transcript));
  const externalIds = sources.flatMap((s) => [s.id, ...s.comments.map((c) => c.id)]);
  const existing = new Set(
    externalIds.length === 0
      ? []
      : (
          await deps.db.$queryRaw<{ external_id: string }[]>`
            SELECT external_id FROM content_store
            WHERE entity_id = ${entity.id}::uuid AND platform = ${PLATFORM} AND external_id = ANY(${externalIds}::text[])`
        ).map((r) => r.external_id),
  );

  // The rows, the summaries and the sync's answer are stored in ONE transaction: a failure
  // anywhere leaves nothing of the page behind.
  const writePage = async (tx: DbTx, ingested: IngestResponse | null): Promise<SyncResult> => {
    const contentIds = ingested?.content_ids ?? [];
    const parentIds = ingested?.parent_content_ids ?? [];
    const commentIds = ingested?.comment_content_ids ?? [];
    const rowsInserted = ingested?.inserted ?? 0;
    const rowsSkipped = ingested?.skipped_dedup ?? 0;
    const notes: ImportedNote[] = [];
    let offset = 0;
    for (const [i, note] of page.notes.entries()) {
      const source = sources[i] as (typeof sources)[number];
      // An item of an erased author (src/governance/deletion) was not stored: its place holds an empty id.
      const noteContentId = (parentIds[i] as string) || null;
      const utteranceSlots = commentIds.slice(offset, offset + source.comments.length);
      const utteranceIds = utteranceSlots.filter((id) => id !== "");
      offset += source.comments.length;
      const storedIds = [noteContentId ? source.id : "", ...source.comments.map((c, j) => (utteranceSlots[j] ? c.id : ""))];
      const newRows = storedIds.filter((id) => id !== "" && !existing.has(id)).length;

      let knowledgeId: string | null = null;
      const summary = summaryOf(note);
      // The summary of a note whose own row was not stored (its owner erased) is not stored either.
      if (summary && noteContentId) {
        const metadata = {
          note_id: note.id,
          note_content_id: noteContentId,
          format: summary.format,
          created_at: note.created_at,
          ...(summary.markdown !== undefined ? { summary_markdown: summary.markdown } : {}),
        } satisfies Prisma.InputJsonValue;
        const rows = await tx.$queryRaw<{ id: string }[]>`
          INSERT INTO knowledge (id, entity_id, workspace_id, kind, platform, external_id, title, content, metadata)
          VALUES (gen_random_uuid(), ${entity.id}::uuid, ${entity.workspaceId}::uuid, ${SUMMARY_KIND}, ${PLATFORM}, ${note.id},
            ${note.title ?? ""}, ${summary.content}, ${JSON.stringify(metadata)}::jsonb)
          ON CONFLICT (entity_id, kind, external_id) DO UPDATE
            SET title = EXCLUDED.title, content = EXCLUDED.content, metadata = EXCLUDED.metadata, updated_at = now()
          RETURNING id`;
        knowledgeId = rows[0]?.id ?? null;
      }

      notes.push({
        note_id: note.id,
        // An erased owner's note is answered without its title (the sync's answer is stored).
        title: noteContentId === null ? "" : (note.title ?? ""),
        created_at: note.created_at,
        content_id: noteContentId,
        status: noteContentId === null ? "skipped_erased" : newRows > 0 ? "imported" : "skipped_dedup",
        new_rows: newRows,
        transcript_included: params.include_transcript && note.transcript != null,
        utterances: source.comments.length,
        utterance_content_ids: utteranceIds,
        knowledge_id: knowledgeId,
      });
    }

    const result: SyncResult = {
      status: "completed",
      request_id: sync.requestId,
      entity_id: entity.id,
      imported: notes.filter((n) => n.status === "imported").length,
      skipped_dedup: notes.filter((n) => n.status === "skipped_dedup").length,
      rows_inserted: rowsInserted,
      rows_skipped_dedup: rowsSkipped,
      rows_skipped_erased: ingested?.skipped_erased ?? 0,
      content_ids: contentIds,
      knowledge_ids: notes.flatMap((n) => (n.knowledge_id ? [n.knowledge_id] : [])),
      notes,
      next_cursor: page.cursor,
      has_more: page.hasMore,
    };
    const done = await tx.noteSync.updateMany({
      where: { id: sync.id, status: { in: ["queued", "running"] } },
      data: {
        status: "completed",
        result: result as unknown as Prisma.InputJsonValue,
        finishedAt: new Date(),
        error: null,
        errorCode: null,
      },
    });
    if (done.count === 0) throw new Error("note sync ended while it was being stored");
    return result;
  };

  if (sources.length === 0) return deps.db.$transaction((tx) => writePage(tx, null));
  const request = IngestRequestSchema.safeParse({
    sources,
    collection_run_id: `meetingnotes-sync:${sync.id}`,
    collection_scope: params.folder_id ? `folder:${params.folder_id}` : "notes",
    coverage_state: page.hasMore || params.cursor ? "bounded" : "exhaustive",
  });
  if (!request.success) {
    throw new MeetingNotesError("malformed", `The ${PROVIDER_NAME} provider answered notes this service cannot store.`);
  }
  const { extra } = await ingestContentWith(deps, entity, request.data, writePage);
  return extra;
}
