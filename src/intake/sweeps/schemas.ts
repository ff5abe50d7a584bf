import { z } from "zod";
import { AttemptFields } from "../../jobs/attempts.js";
import { pathId } from "../../platform/validation.js";
import { IDEMPOTENCY_KEY_PATTERN } from "../collection/schemas.js";

/**
 * Evidence capture (`POST /api/sweeps/run`): enrichment (embeddings and opinion units) of an
 * entity's newly stored originals, as one run per caller and idempotency key.
 *
 * Glossary:
 * - run: one capture, identified by (caller, idempotency_key); a retry of a failed run is a new
 *   run, the key's next attempt (`attempt`, `retry_of`), and the key answers its newest attempt.
 * - the run's originals: the entity's originals stored up to the run's creation (`cutoff`) that
 *   were not yet enriched with the current embedding model then, and those stored with
 *   `collection_run_id` equal to the run's key.
 */
export const RunSweepBody = z.object({
  entity_id: z.string().min(1).max(100),
  idempotency_key: z.string().min(8).max(128).regex(IDEMPOTENCY_KEY_PATTERN),
});
export type RunSweepInput = z.output<typeof RunSweepBody>;

export const SweepRunParams = z.object({ sweep_run_id: pathId("Sweep run") });

export const SWEEP_STATUSES = ["queued", "running", "completed", "failed", "cancelled"] as const;
export type SweepStatus = (typeof SWEEP_STATUSES)[number];

export const SweepStatistics = z.object({
  /** Originals of the run (null until the worker first counts them). */
  originals: z.number().int().nullable(),
  /** Originals this run embedded and split into opinion units. */
  enriched: z.number().int(),
  /** Originals the enrichment queue (which ingest feeds) finished first. */
  already_enriched: z.number().int(),
  /** Originals deleted before the run reached them. */
  missing: z.number().int(),
  opinion_units_inserted: z.number().int(),
  /** Originals of the entity still not enriched up to the cutoff when the run finished. */
  remaining: z.number().int().nullable(),
  embedding_model: z.string().nullable(),
});
export type SweepStatistics = z.infer<typeof SweepStatistics>;

export const emptyStatistics = (): SweepStatistics => ({
  originals: null,
  enriched: 0,
  already_enriched: 0,
  missing: 0,
  opinion_units_inserted: 0,
  remaining: null,
  embedding_model: null,
});

export const SweepRunRecord = z.object({
  run_id: z.string(),
  entity_id: z.string(),
  idempotency_key: z.string(),
  status: z.enum(SWEEP_STATUSES),
  statistics: SweepStatistics,
  error: z.string().nullable(),
  cutoff: z.string(),
  attempts: z.number().int().describe("How many times a worker has taken up this run"),
  ...AttemptFields,
  created_at: z.string(),
  started_at: z.string().nullable(),
  finished_at: z.string().nullable(),
  next: z.string(),
});
export type SweepRunRecord = z.infer<typeof SweepRunRecord>;
