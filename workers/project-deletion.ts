import { runProjectDeletion } from "../src/governance/deletion/project-run.js";
import { markDeletionFailed } from "../src/governance/deletion/resumable.js";
import { processor } from "./runtime.js";

/** `project.delete.v1`: each entity of a project through the entity deletion, then the project; marked failed when its last attempt fails (deleting it again resumes). */
export const projectDeletionProcessor = processor<"project.delete.v1">(
  (payload, { deps }) => runProjectDeletion(deps, payload.deletionId),
  {
    // A deletion record is no job kind with an end event: nothing to announce.
    onLastFailure: (payload, err, { deps }) => markDeletionFailed(deps, payload.deletionId, err).then(() => null),
  },
);
