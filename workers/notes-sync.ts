import { UnrecoverableError } from "bullmq";
import { isFinalAttempt } from "../src/jobs/failures.js";
import { runNoteSync } from "../src/notes/importer.js";
import type { Processor } from "./runtime.js";

/**
 * `notes.sync.v1`: imports one page of meeting notes. A provider failure ends the sync
 * (recorded on its row) without retries; anything unexpected is retried, and the last
 * attempt records the failure. The job is removed when it ends (see the job catalog),
 * taking the sealed credential with it.
 */
export const notesSyncProcessor: Processor<"notes.sync.v1"> = async (payload, { deps, job }) => {
  const outcome = await runNoteSync(deps, payload, { lastAttempt: isFinalAttempt(job) });
  if (outcome.status === "failed") throw new UnrecoverableError(`meeting-note sync ${payload.syncId} failed: ${outcome.code}`);
  if (outcome.status === "skipped" || outcome.status === "cancelled") return { syncId: payload.syncId, status: outcome.status };
  return { syncId: payload.syncId, status: "completed", imported: outcome.result.imported, skipped_dedup: outcome.result.skipped_dedup };
};
