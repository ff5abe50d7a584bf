import { linkOrEmpty } from "../../platform/links.js";
import { clipCodePoints, codePointLength, splitCodePoints } from "../../platform/text.js";
import { NOTE_ROW_KIND } from "../../platform/vocabulary.js";
import type { Note, Utterance } from "./provider.js";

/**
 * How a provider note becomes stored material:
 *
 * - the note itself → one `content_store` source row (platform `meetingnotes`) whose
 *   text is the meeting's title, date, owner and attendees: never the summary;
 * - each transcript utterance → one comment row under it (quotable: speaker as author,
 *   note id, utterance index and start/end times in metadata);
 * - the summary → one `knowledge` row (kind `meeting_summary`), which is never quoted.
 */
export const PLATFORM = "meetingnotes";
export const SUMMARY_KIND = "meeting_summary";

export { NOTE_ROW_KIND };
/** Longest comment text the ingest accepts; longer utterances are stored in parts. */
export const MAX_UTTERANCE_CHARS = 50_000;

type Person = { name?: string | null | undefined; email?: string | null | undefined };

const personLabel = (p: Person | null | undefined) => {
  if (!p) return "";
  const name = p.name?.trim() ?? "";
  const email = p.email?.trim() ?? "";
  if (name && email) return `${name} <${email}>`;
  return name || email;
};

/** The note row's text: what the meeting was and who was in it. */
export function noteHeader(note: Note): string {
  const lines = [note.title?.trim() || "Untitled meeting", `Date: ${note.created_at}`];
  const owner = personLabel(note.owner);
  if (owner) lines.push(`Owner: ${owner}`);
  const attendees = (note.attendees ?? []).map(personLabel).filter(Boolean);
  if (attendees.length > 0) lines.push(`Attendees: ${attendees.join(", ")}`);
  const event = note.calendar_event?.event_title;
  if (typeof event === "string" && event.trim()) lines.push(`Calendar event: ${event.trim()}`);
  return lines.join("\n");
}

/** The speaker as the provider labels them: the diarization label, else the audio source. */
export const speakerOf = (u: Utterance) => u.speaker.diarization_label?.trim() || u.speaker.source.trim() || "unknown";

const pick = (obj: Record<string, unknown> | null | undefined, keys: string[]) =>
  obj ? Object.fromEntries(keys.filter((k) => obj[k] !== undefined).map((k) => [k, obj[k]])) : null;

export interface IngestComment {
  id: string;
  text: string;
  author: string;
  published_at: string | null;
  metadata: Record<string, unknown>;
}

/** Transcript utterances as comments, in order; empty utterances are skipped, long ones split. */
export function utteranceComments(note: Note): IngestComment[] {
  const out: IngestComment[] = [];
  (note.transcript ?? []).forEach((u, index) => {
    const text = u.text;
    if (text.trim().length === 0) return;
    const pieces = splitCodePoints(text, MAX_UTTERANCE_CHARS);
    const parts = pieces.length;
    for (let part = 0; part < parts; part++) {
      out.push({
        id: parts === 1 ? `${note.id}#u${index}` : `${note.id}#u${index}.${part}`,
        text: pieces[part] as string,
        author: clipCodePoints(speakerOf(u), 500),
        published_at: u.start_time ?? null,
        metadata: {
          kind: "transcript_utterance",
          note_id: note.id,
          utterance_index: index,
          ...(parts > 1 ? { part, parts } : {}),
          start_time: u.start_time ?? null,
          end_time: u.end_time ?? null,
          speaker_source: u.speaker.source,
          diarization_label: u.speaker.diarization_label ?? null,
        },
      });
    }
  });
  return out;
}

/** The note as an ingest source (the summary is deliberately absent). */
export function noteSource(note: Note, includeTranscript: boolean) {
  const comments = includeTranscript ? utteranceComments(note) : [];
  return {
    id: note.id,
    title: clipCodePoints(note.title ?? "", 2000),
    url: codePointLength(note.web_url ?? "") <= 5000 ? linkOrEmpty(note.web_url) : "",
    platform: PLATFORM,
    content: clipCodePoints(noteHeader(note), 500_000),
    author: clipCodePoints(personLabel(note.owner), 500),
    published_at: note.created_at,
    metadata: {
      kind: NOTE_ROW_KIND,
      note_id: note.id,
      created_at: note.created_at,
      updated_at: note.updated_at ?? null,
      owner: note.owner ? pick(note.owner, ["name", "email"]) : null,
      attendees: (note.attendees ?? []).map((a) => pick(a, ["name", "email"])),
      calendar_event: pick(note.calendar_event, [
        "event_title",
        "invitees",
        "organiser",
        "calendar_event_id",
        "scheduled_start_time",
        "scheduled_end_time",
      ]),
      folder_membership: (note.folder_membership ?? []).map((f) => pick(f, ["id", "name"])),
      transcript_included: includeTranscript && note.transcript != null,
      utterances: comments.length,
      summary_in_knowledge: summaryOf(note) !== undefined,
    },
    comments,
  };
}

/** The summary to keep as knowledge: plain text when given, else the markdown. */
export function summaryOf(note: Note): { content: string; format: "text" | "markdown"; markdown?: string } | undefined {
  const text = note.summary_text?.trim() ? note.summary_text : undefined;
  const markdown = note.summary_markdown?.trim() ? note.summary_markdown : undefined;
  if (text !== undefined) return { content: text, format: "text", ...(markdown !== undefined ? { markdown } : {}) };
  if (markdown !== undefined) return { content: markdown, format: "markdown" };
  return undefined;
}
