import { z } from "zod";
import { optional, withDefault } from "../../platform/validation.js";

/**
 * Feedback observations (`POST /api/observations/submit`): 1–50 snapshots of feedback an agent or a
 * connected tool saw, each saved as an original (a `content_store` source row) of an entity in the
 * project's workspace. An observation is a snapshot of a source (`source_id`): changed text or
 * metadata for the same source is a new snapshot, never a new person.
 */
export const SIGNAL_TYPES = ["official", "reception"] as const;

export const ObservationItem = z.object({
  content: z.string().min(1).max(500_000),
  source_platform: withDefault(z.string().trim().min(1).max(100), "agent"),
  source_id: optional(z.string().trim().min(1).max(500)),
  entity_id: optional(z.string().min(1).max(100)),
  signal_type: optional(z.enum(SIGNAL_TYPES)),
  observation_type: withDefault(z.string().trim().min(1).max(100), "general"),
  metadata: withDefault(z.record(z.string(), z.unknown()), {}),
});
export type ObservationItem = z.output<typeof ObservationItem>;

export const SubmitObservationsBody = z.object({
  project_id: optional(z.string().min(1).max(100)),
  entity_id: optional(z.string().min(1).max(100)),
  observations: z.array(ObservationItem).min(1).max(50),
});
export type SubmitObservationsInput = z.output<typeof SubmitObservationsBody>;

export const OBSERVATION_COUNT_BASIS =
  "Counts are saved observation snapshots (originals), not unique people: changed text or metadata for the same source_id is a new snapshot of the same source.";

const ProcessingStatus = z.enum(["queued", "enriched", "stored"]);

export const SavedObservation = z.object({
  index: z.number().int(),
  /** Empty when the observation was not stored (`skipped_erased`). */
  id: z.string(),
  entity_id: z.string(),
  platform: z.string(),
  source_platform: z.string(),
  source_id: z.string().nullable(),
  /** `skipped_erased`: its author was erased in the workspace (src/governance/deletion), so it was not stored. */
  status: z.enum(["created", "existing", "skipped_erased"]),
  snapshot_of: z.string().nullable(),
  processing_status: z.enum([...ProcessingStatus.options, "skipped"]),
});

export const SubmitObservationsResponse = z.object({
  accepted: z.number().int(),
  processing_status: ProcessingStatus,
  ids: z.array(z.string()),
  inserted: z.number().int(),
  existing: z.number().int(),
  /** Observations not stored because their author was erased in the workspace. */
  skipped_erased: z.number().int(),
  observations: z.array(SavedObservation),
  project_id: z.string().nullable(),
  workspace_id: z.string(),
  count_basis: z.string(),
});
export type SubmitObservationsResponse = z.infer<typeof SubmitObservationsResponse>;
