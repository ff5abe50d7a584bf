import { setTimeout as delay } from "node:timers/promises";
import type { Response } from "undici";
import { z } from "zod";
import { parseRetryAfterSeconds } from "../../platform/http/retry-after.js";
import { outboundFetch, trustedEndpoint } from "../../platform/outbound.js";

/**
 * Client for the meeting-notes provider (`meetingnotes`), modelled on Granola's public
 * API: bearer API key; `GET /v1/notes` lists note summaries a page at a time
 * (`{notes, hasMore, cursor}`); `GET /v1/notes/{id}?include=transcript` answers one note
 * with its summary, attendees, calendar event, folders and, when asked, its transcript.
 *
 * Every answer is checked against the schemas below; timeouts, 429 and 5xx are retried
 * with exponential backoff (honouring `Retry-After`); failures surface as
 * `MeetingNotesError` with a `kind` the caller maps to its own answer.
 */
export const PROVIDER_NAME = "meetingnotes";
export const NOTE_ID_PATTERN = /^not_[a-zA-Z0-9]{14}$/;
export const FOLDER_ID_PATTERN = /^fol_[a-zA-Z0-9]{14}$/;

const str = z.string().max(100_000);
const Person = z.looseObject({ name: str.nullish(), email: str.nullish() });

export const NoteSummary = z.looseObject({
  id: z.string().regex(NOTE_ID_PATTERN),
  object: str.nullish(),
  title: str.nullish(),
  owner: Person.nullish(),
  created_at: z.iso.datetime({ offset: true }),
  updated_at: z.iso.datetime({ offset: true }).nullish(),
});
export type NoteSummary = z.infer<typeof NoteSummary>;

export const ListNotesResponse = z.looseObject({
  notes: z.array(NoteSummary).max(100),
  hasMore: z.boolean(),
  cursor: z.string().max(10_000).nullable(),
});
export type ListNotesResponse = z.infer<typeof ListNotesResponse>;

export const Utterance = z.looseObject({
  speaker: z.looseObject({ source: z.string().max(200), diarization_label: str.nullish() }),
  text: z.string().max(1_000_000),
  start_time: z.iso.datetime({ offset: true }).nullish(),
  end_time: z.iso.datetime({ offset: true }).nullish(),
});
export type Utterance = z.infer<typeof Utterance>;

export const Note = NoteSummary.extend({
  web_url: str.nullish(),
  calendar_event: z.looseObject({}).nullish(),
  attendees: z.array(Person).max(10_000).nullish(),
  folder_membership: z.array(z.looseObject({ id: z.string().max(200), object: str.nullish(), name: str.nullish() })).nullish(),
  summary_text: z.string().max(2_000_000).nullish(),
  summary_markdown: z.string().max(2_000_000).nullish(),
  transcript: z.array(Utterance).max(100_000).nullish(),
});
export type Note = z.infer<typeof Note>;

export type MeetingNotesErrorKind = "unauthorized" | "unavailable" | "rate_limited" | "bad_status" | "malformed";

export class MeetingNotesError extends Error {
  override name = "MeetingNotesError";
  constructor(
    readonly kind: MeetingNotesErrorKind,
    message: string,
    readonly details: { status?: number; retryAfterSeconds?: number } = {},
  ) {
    super(message);
  }
}

export interface MeetingNotesClientOptions {
  baseUrl: string;
  apiKey: string;
  timeoutMs: number;
  /** Aborts the calls in flight (the sync was cancelled). */
  signal?: AbortSignal;
  /** Attempts per request, including the first (default 3). */
  attempts?: number;
  /** First backoff delay; doubles per retry, with jitter (default 250 ms). */
  backoffMs?: number;
  /** Longest `Retry-After` honoured before giving up (default 10 s). */
  maxRetryAfterMs?: number;
}

export interface ListNotesParams {
  pageSize: number;
  cursor?: string | undefined;
  createdAfter?: string | undefined;
  folderId?: string | undefined;
}

export class MeetingNotesClient {
  private readonly base: string;
  private readonly attempts: number;
  private readonly backoffMs: number;
  private readonly maxRetryAfterMs: number;

  constructor(private readonly options: MeetingNotesClientOptions) {
    this.base = options.baseUrl.replace(/\/+$/, "");
    this.attempts = Math.max(1, options.attempts ?? 3);
    this.backoffMs = options.backoffMs ?? 250;
    this.maxRetryAfterMs = options.maxRetryAfterMs ?? 10_000;
  }

  async listNotes(params: ListNotesParams): Promise<ListNotesResponse> {
    const query = new URLSearchParams({ page_size: String(params.pageSize) });
    if (params.cursor) query.set("cursor", params.cursor);
    if (params.createdAfter) query.set("created_after", params.createdAfter);
    if (params.folderId) query.set("folder_id", params.folderId);
    return this.get(`/v1/notes?${query}`, ListNotesResponse, "note list");
  }

  async getNote(id: string, options: { includeTranscript: boolean }): Promise<Note> {
    if (!NOTE_ID_PATTERN.test(id)) throw new MeetingNotesError("malformed", `The ${PROVIDER_NAME} provider listed an invalid note id.`);
    const suffix = options.includeTranscript ? "?include=transcript" : "";
    const note = await this.get(`/v1/notes/${id}${suffix}`, Note, "note");
    if (note.id !== id) throw new MeetingNotesError("malformed", `The ${PROVIDER_NAME} provider answered a different note than asked.`);
    return note;
  }

  private async get<S extends z.ZodType>(path: string, schema: S, what: string): Promise<z.output<S>> {
    let lastError: MeetingNotesError | undefined;
    for (let attempt = 1; attempt <= this.attempts; attempt++) {
      const outcome = await this.once(path, what);
      if (outcome.ok) {
        const parsed = schema.safeParse(outcome.body);
        if (!parsed.success) {
          throw new MeetingNotesError("malformed", `The ${PROVIDER_NAME} provider answered a ${what} in an unexpected format.`);
        }
        return parsed.data;
      }
      lastError = outcome.error;
      // A cancelled sync's aborted call is not retried (nor its backoff waited out).
      if (!outcome.retryable || attempt === this.attempts || this.options.signal?.aborted) break;
      const retryAfter = outcome.error.details.retryAfterSeconds;
      if (retryAfter !== undefined && retryAfter * 1000 > this.maxRetryAfterMs) break;
      const backoff = this.backoffMs * 2 ** (attempt - 1) * (0.75 + Math.random() * 0.5);
      await delay(retryAfter !== undefined ? retryAfter * 1000 : backoff, undefined, { signal: this.options.signal }).catch(
        () => undefined,
      );
    }
    throw lastError ?? new MeetingNotesError("unavailable", `The ${PROVIDER_NAME} provider could not be reached.`);
  }

  private async once(
    path: string,
    what: string,
  ): Promise<{ ok: true; body: unknown } | { ok: false; retryable: boolean; error: MeetingNotesError }> {
    let res: Response;
    try {
      // The provider never redirects: a redirect is answered as an error, not followed.
      res = await outboundFetch(
        `${this.base}${path}`,
        {
          headers: { Authorization: `Bearer ${this.options.apiKey}`, Accept: "application/json" },
          signal: this.options.signal
            ? AbortSignal.any([this.options.signal, AbortSignal.timeout(this.options.timeoutMs)])
            : AbortSignal.timeout(this.options.timeoutMs),
        },
        trustedEndpoint(this.base, 0),
      );
    } catch (err) {
      const timedOut = (err as { name?: string }).name === "TimeoutError";
      const message = timedOut
        ? `The ${PROVIDER_NAME} provider did not answer the ${what} request within ${this.options.timeoutMs} ms.`
        : `The ${PROVIDER_NAME} provider could not be reached.`;
      return { ok: false, retryable: true, error: new MeetingNotesError("unavailable", message) };
    }

    if (res.status === 401 || res.status === 403) {
      await res.body?.cancel();
      return {
        ok: false,
        retryable: false,
        error: new MeetingNotesError("unauthorized", `The ${PROVIDER_NAME} provider refused the api_key (HTTP ${res.status}).`, {
          status: res.status,
        }),
      };
    }
    if (res.status === 429) {
      await res.body?.cancel();
      const retryAfterSeconds = parseRetryAfterSeconds(res.headers.get("retry-after"));
      return {
        ok: false,
        retryable: true,
        error: new MeetingNotesError("rate_limited", `The ${PROVIDER_NAME} provider is rate limiting requests.`, {
          status: 429,
          ...(retryAfterSeconds !== undefined ? { retryAfterSeconds } : {}),
        }),
      };
    }
    if (res.status >= 500) {
      await res.body?.cancel();
      const retryAfterSeconds = parseRetryAfterSeconds(res.headers.get("retry-after"));
      return {
        ok: false,
        retryable: true,
        error: new MeetingNotesError("bad_status", `The ${PROVIDER_NAME} provider failed the ${what} request (HTTP ${res.status}).`, {
          status: res.status,
          ...(retryAfterSeconds !== undefined ? { retryAfterSeconds } : {}),
        }),
      };
    }
    if (res.status !== 200) {
      await res.body?.cancel();
      return {
        ok: false,
        retryable: false,
        error: new MeetingNotesError("bad_status", `The ${PROVIDER_NAME} provider answered the ${what} request with HTTP ${res.status}.`, {
          status: res.status,
        }),
      };
    }

    try {
      return { ok: true, body: await res.json() };
    } catch (err) {
      const timedOut = (err as { name?: string }).name === "TimeoutError";
      if (timedOut) {
        return {
          ok: false,
          retryable: true,
          error: new MeetingNotesError("unavailable", `The ${PROVIDER_NAME} provider did not finish the ${what} answer in time.`),
        };
      }
      return {
        ok: false,
        retryable: false,
        error: new MeetingNotesError("malformed", `The ${PROVIDER_NAME} provider answered a ${what} that is not JSON.`),
      };
    }
  }
}
