import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A local HTTP server that answers like the meeting-notes provider (Granola's public API):
 * bearer key; `GET /v1/notes?created_after&folder_id&cursor&page_size` → `{notes, hasMore,
 * cursor}` (newest first, opaque cursor); `GET /v1/notes/{id}[?include=transcript]` → the
 * note, with `transcript` only when asked. Faults can be injected per route.
 */
export interface FakeUtterance {
  speaker: { source: string; diarization_label?: string };
  text: string;
  start_time: string;
  end_time: string;
}

export interface FakeNote {
  id: string;
  object: "note";
  title: string;
  owner: { name: string; email: string };
  created_at: string;
  updated_at: string;
  web_url: string;
  calendar_event: Record<string, unknown> | null;
  attendees: { name: string; email: string }[];
  folder_membership: { id: string; object: "folder"; name: string }[];
  summary_text: string;
  summary_markdown: string;
  transcript: FakeUtterance[] | null;
}

export interface Fault {
  route: "list" | "note" | "any";
  status: number;
  body?: string;
  headers?: Record<string, string>;
  /** How many requests the fault answers (default: all). */
  times?: number;
  /** Only for this note id (route "note"). */
  noteId?: string;
}

const ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
export const alnum = (n: number) => [...randomBytes(n)].map((b) => ALNUM[b % ALNUM.length]).join("");
export const noteId = () => `not_${alnum(14)}`;
export const folderId = () => `fol_${alnum(14)}`;

export function makeNote(index: number, options: { transcript?: boolean; folder?: string; summary?: string } = {}): FakeNote {
  const created = new Date(Date.UTC(2026, 0, 1 + index, 15, 30)).toISOString();
  const id = noteId();
  const at = (min: number) => new Date(Date.parse(created) + min * 60_000).toISOString();
  return {
    id,
    object: "note",
    title: `Customer call ${index}`,
    owner: { name: "Oat Benson", email: "oat@example.com" },
    created_at: created,
    updated_at: at(60),
    web_url: `https://notes.example.com/d/${id}`,
    calendar_event: {
      event_title: `Customer call ${index}`,
      invitees: [{ email: "raisin@example.com" }],
      organiser: "oat@example.com",
      calendar_event_id: `evt${index}`,
      scheduled_start_time: created,
      scheduled_end_time: at(60),
    },
    attendees: [
      { name: "Oat Benson", email: "oat@example.com" },
      { name: "Raisin Patel", email: "raisin@example.com" },
    ],
    folder_membership: options.folder ? [{ id: options.folder, object: "folder", name: "Research" }] : [],
    summary_text: options.summary ?? `SUMMARY-${index}-${alnum(10)}: the team agreed that pricing was the main concern.`,
    summary_markdown: `## Summary\n\n${options.summary ?? `markdown summary ${index}`}`,
    transcript:
      options.transcript === false
        ? null
        : [
            { speaker: { source: "microphone" }, text: `Thanks for joining call ${index}.`, start_time: at(0), end_time: at(1) },
            {
              speaker: { source: "speaker", diarization_label: "Speaker B" },
              text: `Honestly the export feature is what keeps us on it (call ${index}).`,
              start_time: at(1),
              end_time: at(2),
            },
            { speaker: { source: "speaker" }, text: "   ", start_time: at(2), end_time: at(2) },
            { speaker: { source: "microphone" }, text: `What would make you leave? (call ${index})`, start_time: at(3), end_time: at(4) },
          ],
  };
}

export interface RecordedRequest {
  path: string;
  query: URLSearchParams;
  authorization: string | undefined;
}

export class FakeNotesProvider {
  readonly notes: FakeNote[] = [];
  readonly requests: RecordedRequest[] = [];
  readonly faults: Fault[] = [];
  /** When set, every request waits until `release()` is called. */
  hold = false;
  private held: (() => void)[] = [];
  private server: Server | undefined;
  url = "";

  constructor(readonly apiKey: string) {}

  async start(): Promise<string> {
    this.server = createServer((req, res) => {
      void this.handle(req, res);
    });
    await new Promise<void>((resolve) => this.server?.listen(0, "127.0.0.1", resolve));
    const { port } = this.server.address() as AddressInfo;
    this.url = `http://127.0.0.1:${port}`;
    return this.url;
  }

  release(): void {
    this.hold = false;
    for (const go of this.held.splice(0)) go();
  }

  async close(): Promise<void> {
    this.release();
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()));
  }

  count(route: "list" | "note") {
    return this.requests.filter((r) => (route === "list" ? r.path === "/v1/notes" : r.path.startsWith("/v1/notes/"))).length;
  }

  private async handle(req: IncomingMessage, res: ServerResponse) {
    const url = new URL(req.url ?? "/", "http://localhost");
    this.requests.push({ path: url.pathname, query: url.searchParams, authorization: req.headers.authorization });
    if (this.hold) await new Promise<void>((resolve) => this.held.push(resolve));
    if (res.destroyed) return;

    const route = url.pathname === "/v1/notes" ? "list" : url.pathname.startsWith("/v1/notes/") ? "note" : undefined;
    const send = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      res.writeHead(status, { "content-type": "application/json", ...headers });
      res.end(typeof body === "string" ? body : JSON.stringify(body));
    };
    if (!route) return send(404, { message: "Not found" });
    if (req.headers.authorization !== `Bearer ${this.apiKey}`) return send(401, { message: "Invalid API key" });

    const id = route === "note" ? decodeURIComponent(url.pathname.slice("/v1/notes/".length)) : undefined;
    const fault = this.faults.find(
      (f) => (f.route === "any" || f.route === route) && (f.times ?? 1) > 0 && (f.noteId === undefined || f.noteId === id),
    );
    if (fault) {
      if (fault.times !== undefined) fault.times -= 1;
      res.writeHead(fault.status, { "content-type": "application/json", ...(fault.headers ?? {}) });
      res.end(fault.body ?? JSON.stringify({ message: "fault" }));
      return;
    }

    if (route === "list") {
      const pageSize = Number(url.searchParams.get("page_size") ?? "10");
      if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > 30) return send(400, { message: "page_size" });
      const after = url.searchParams.get("created_after");
      const folder = url.searchParams.get("folder_id");
      const cursor = url.searchParams.get("cursor");
      const offset = cursor ? (JSON.parse(Buffer.from(cursor, "base64url").toString()) as { o: number }).o : 0;
      const matching = [...this.notes]
        .sort((a, b) => b.created_at.localeCompare(a.created_at))
        .filter((n) => !after || n.created_at > after)
        .filter((n) => !folder || n.folder_membership.some((f) => f.id === folder));
      const page = matching.slice(offset, offset + pageSize);
      const hasMore = offset + pageSize < matching.length;
      return send(200, {
        notes: page.map(({ id: nid, object, title, owner, created_at, updated_at }) => ({
          id: nid,
          object,
          title,
          owner,
          created_at,
          updated_at,
        })),
        hasMore,
        cursor: hasMore ? Buffer.from(JSON.stringify({ o: offset + pageSize })).toString("base64url") : null,
      });
    }

    const note = this.notes.find((n) => n.id === id);
    if (!note) return send(404, { message: "Note not found" });
    const { transcript, ...rest } = note;
    return send(200, url.searchParams.get("include") === "transcript" ? { ...rest, transcript } : rest);
  }
}
