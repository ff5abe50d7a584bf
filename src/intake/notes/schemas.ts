import { z } from "zod";
import { AttemptFields } from "../../jobs/attempts.js";
import { isoDateTimeString } from "../../platform/dates.js";
import { optional, pathId, withDefault } from "../../platform/validation.js";
import { FOLDER_ID_PATTERN } from "./provider.js";

/**
 * Meeting-note import (spec operation 4). Required: `api_key` and `entity_id`; the rest
 * is optional (defaults: `max_notes` 10, `include_transcript` true, `request_id`
 * generated). Decisions beyond the spec are in docs/api.md ("Meeting-note import").
 */
export const DEFAULT_MAX_NOTES = 10;

export const SyncBody = z.object({
  api_key: z.string().min(8).max(500),
  entity_id: z.string().min(1).max(100),
  created_after: optional(isoDateTimeString({ zone: "required" })),
  folder_id: optional(z.string().regex(FOLDER_ID_PATTERN)),
  max_notes: withDefault(z.number().int().min(1).max(20), DEFAULT_MAX_NOTES),
  include_transcript: withDefault(z.boolean(), true),
  // An empty cursor is the first page, like an absent one.
  cursor: optional(z.string().max(4000)).transform((v) => (v === "" ? undefined : v)),
  request_id: optional(z.string().min(8).max(128)),
});
export type SyncInput = z.output<typeof SyncBody>;

/** What the job needs besides the credential; stored on the sync row, never the api_key. */
export const SyncParams = z.object({
  entity_id: z.uuid(),
  created_after: z.string().optional(),
  folder_id: z.string().optional(),
  max_notes: z.number().int().min(1).max(20),
  include_transcript: z.boolean(),
  cursor: z.string().optional(),
});
export type SyncParams = z.infer<typeof SyncParams>;

export const SyncStatusParams = z.object({ request_id: pathId("Meeting-note sync", z.string().min(8).max(128)) });

export const ImportedNote = z.object({
  note_id: z.string(),
  title: z.string(),
  created_at: z.string(),
  /** Null when the note's own row was not stored: its author was erased in the workspace (status `skipped_erased`). */
  content_id: z.uuid().nullable(),
  status: z.enum(["imported", "skipped_dedup", "skipped_erased"]),
  new_rows: z.number().int(),
  transcript_included: z.boolean(),
  utterances: z.number().int(),
  utterance_content_ids: z.array(z.uuid()),
  knowledge_id: z.uuid().nullable(),
});
export type ImportedNote = z.infer<typeof ImportedNote>;

export const SyncResult = z.object({
  status: z.literal("completed"),
  request_id: z.string(),
  entity_id: z.uuid(),
  imported: z.number().int(),
  skipped_dedup: z.number().int(),
  rows_inserted: z.number().int(),
  rows_skipped_dedup: z.number().int(),
  /** Rows not stored because their author was erased in the workspace (src/governance/deletion). */
  rows_skipped_erased: z.number().int().optional(),
  content_ids: z.array(z.uuid()),
  knowledge_ids: z.array(z.uuid()),
  notes: z.array(ImportedNote),
  next_cursor: z.string().nullable(),
  has_more: z.boolean(),
});
export type SyncResult = z.infer<typeof SyncResult>;

/**
 * The imported page as answered: the stored result and which attempt of the request_id imported it
 * (a retry of a failed sync is a new attempt; see src/jobs/attempts.ts).
 */
export const SyncAnswered = SyncResult.extend(AttemptFields);
export type SyncAnswered = z.infer<typeof SyncAnswered>;

export const SyncPending = z.object({
  status: z.enum(["queued", "running"]),
  request_id: z.string(),
  entity_id: z.uuid(),
  ...AttemptFields,
  next: z.string(),
});
export type SyncPending = z.infer<typeof SyncPending>;

export const SyncFailed = z.object({
  status: z.literal("failed"),
  request_id: z.string(),
  entity_id: z.uuid(),
  ...AttemptFields,
  error: z.object({ code: z.string(), detail: z.string() }),
});

export const SyncCancelled = z.object({
  status: z.literal("cancelled"),
  request_id: z.string(),
  entity_id: z.uuid(),
  ...AttemptFields,
});

export const SyncStatus = z.union([SyncAnswered, SyncPending, SyncFailed, SyncCancelled]);
