import { runEntityDeletion } from "../src/governance/deletion/entity-run.js";
import { markDeletionFailed } from "../src/governance/deletion/resumable.js";
import { processor } from "./runtime.js";

/** `entity.delete.v1`: an entity's originals in batches, then the entity; marked failed when its last attempt fails (deleting it again resumes). */
export const entityDeletionProcessor = processor<"entity.delete.v1">((payload, { deps }) => runEntityDeletion(deps, payload.deletionId), {
  // A deletion record is no job kind with an end event: nothing to announce.
  onLastFailure: (payload, err, { deps }) => markDeletionFailed(deps, payload.deletionId, err).then(() => null),
});
