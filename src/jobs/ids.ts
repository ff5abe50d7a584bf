import { deriveJobId } from "../platform/queues.js";
import type { JobKind } from "./events.js";

/**
 * Every BullMQ job id the service derives, in one table. A job id names the work, so a second
 * add of the same work (a replayed create, a retried step, a requeue) is the same queue entry
 * and BullMQ ignores it while it holds the first.
 */
export const jobIds = {
  /**
   * A collection job: one per caller, idempotency key and attempt (stored on the row as queue_job_id).
   * A retry is a new attempt (a new row), so an old attempt's queue entry never names the new one.
   */
  collection: (userId: string, idempotencyKey: string, attempt = 1) =>
    attempt === 1
      ? deriveJobId("collection", userId, idempotencyKey)
      : deriveJobId("collection", userId, idempotencyKey, `attempt-${attempt}`),
  analysis: (analysisId: string) => deriveJobId("analysis", analysisId),
  /** A workflow run's first step. */
  run: (runId: string) => deriveJobId("run", runId),
  /** The step of a workflow run that follows the end of one of its child jobs. */
  runContinuation: (runId: string, kind: JobKind, childId: string) => deriveJobId("run", runId, kind, childId),
  /** A meeting-note sync: one per caller, request_id and attempt (a retry of a failed sync is a new attempt). */
  notes: (userId: string, requestId: string, attempt = 1) =>
    attempt === 1 ? deriveJobId("notes", userId, requestId) : deriveJobId("notes", userId, requestId, `attempt-${attempt}`),
  /** Enrichment of a chunk of stored rows (the same rows make the same job). */
  enrichment: (contentIds: string[]) => deriveJobId("enrich", ...contentIds),
  /** An operator's requeue of unenriched rows: a new pass each time the command runs. */
  enrichmentRequeue: (pass: string, contentIds: string[]) => deriveJobId("enrich-requeue", pass, ...contentIds),
  /** An operator's re-analysis of stored rows by a new analyser: a new pass each time the command runs. */
  reanalysis: (pass: string, contentIds: string[]) => deriveJobId("reanalyse", pass, ...contentIds),
  /**
   * A tracker's kind adaptation (src/insights/enrichment/kind-adaptation.ts): one per tracker and `window`, so the
   * chunks enriched in one window queue it once (while it waits out its delay) and a later window queues it again.
   */
  kindAdaptation: (tracker: { entityId: string; platform: string; repository: string | null }, window: number) =>
    deriveJobId("kinds", tracker.entityId, tracker.platform, tracker.repository ?? "", String(window)),
  /** An evidence capture run (each attempt is its own row, so its own job). */
  sweep: (runId: string) => deriveJobId("sweep", runId),
  /** An author erasure's batches (src/governance/deletion). */
  erasure: (erasureId: string) => deriveJobId("erasure", erasureId),
  /** An entity's deletion (src/governance/deletion/entity-run.ts). */
  entityDeletion: (deletionId: string) => deriveJobId("entity-delete", deletionId),
  /** A project's deletion (src/governance/deletion/project-run.ts). */
  projectDeletion: (deletionId: string) => deriveJobId("project-delete", deletionId),
  /** The re-embedding of stored vectors: one at a time (a second `reembed` while one is queued or running is the same entry). */
  reembed: () => "reembed-stored",
  pageEmbed: (pageId: string, version: number) => deriveJobId("page-embed", pageId, String(version)),
  /** One webhook delivery (one endpoint, one message). */
  webhookDelivery: (deliveryId: string) => deriveJobId("webhook", deliveryId),
} as const;
