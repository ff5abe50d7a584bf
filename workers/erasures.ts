import { markErasureFailed, runErasure } from "../src/governance/deletion/erasure-run.js";
import { processor } from "./runtime.js";

/** `erasure.run.v1`: an author erasure's batches; marked failed when its last attempt fails (posting it again resumes). */
export const erasureProcessor = processor<"erasure.run.v1">(
  (payload, { deps }) =>
    runErasure(deps.db, payload.erasureId, deps.config.ERASURE_BATCH_SIZE, { factor: deps.config.DELETION_PAUSE_FACTOR }),
  // An erasure record is no job kind with an end event: nothing to announce.
  { onLastFailure: (payload, err, { deps }) => markErasureFailed(deps.db, payload.erasureId, err).then(() => null) },
);
