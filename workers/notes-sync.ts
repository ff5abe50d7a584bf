import { UnrecoverableError } from "bullmq";
import { failLastAttempt, runNoteSync } from "../src/intake/notes/importer.js";
import { endedWith, endOf } from "../src/jobs/lifecycle.js";
import { processor } from "./runtime.js";

/**
 * `notes.sync.v1`: imports one page of meeting notes. A provider failure ends the sync
 * (recorded on its row) without retries; anything unexpected is retried, and the runtime fails
 * the sync when no attempt follows. The job is removed when it ends (see the job catalog),
 * taking the sealed credential with it.
 */
export const notesSyncProcessor = processor<"notes.sync.v1">(
  async (payload, { deps }) => {
    const outcome = await runNoteSync(deps, payload);
    if (outcome.status === "failed")
      throw endedWith(new UnrecoverableError(`meeting-note sync ${payload.syncId} failed: ${outcome.code}`), endOf(outcome));
    if (outcome.status === "skipped" || outcome.status === "cancelled") return { syncId: payload.syncId, status: outcome.status };
    return endedWith(
      { syncId: payload.syncId, status: "completed", imported: outcome.result.imported, skipped_dedup: outcome.result.skipped_dedup },
      endOf(outcome),
    );
  },
  { onLastFailure: (payload, _err, { deps }) => failLastAttempt(deps, payload.syncId) },
);
