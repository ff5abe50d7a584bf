import { markEntityDeletionFailed, runEntityDeletion } from "../src/deletion/entity-run.js";
import { isFinalAttempt } from "../src/jobs/failures.js";
import type { Processor } from "./runtime.js";

/** `entity.delete.v1`: an entity's originals in batches, then the entity; marked failed when its last attempt fails (deleting it again resumes). */
export const entityDeletionProcessor: Processor<"entity.delete.v1"> = async (payload, { deps, job }) => {
  const finalAttempt = isFinalAttempt(job);
  try {
    return await runEntityDeletion(deps, payload.deletionId);
  } catch (err) {
    if (finalAttempt) {
      await markEntityDeletionFailed(deps, payload.deletionId, err as Error).catch((markErr: unknown) =>
        deps.logger.error({ deletionId: payload.deletionId, err: markErr }, "could not mark the entity deletion failed"),
      );
    }
    throw err;
  }
};
