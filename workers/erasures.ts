import { markErasureFailed, runErasure } from "../src/deletion/erasure-run.js";
import { isFinalAttempt } from "../src/jobs/failures.js";
import type { Processor } from "./runtime.js";

/** `erasure.run.v1`: an author erasure's batches; marked failed when its last attempt fails (posting it again resumes). */
export const erasureProcessor: Processor<"erasure.run.v1"> = async (payload, { deps, job }) => {
  const finalAttempt = isFinalAttempt(job);
  try {
    return await runErasure(deps.db, payload.erasureId, deps.config.ERASURE_BATCH_SIZE);
  } catch (err) {
    if (finalAttempt) {
      await markErasureFailed(deps.db, payload.erasureId, err as Error).catch((markErr: unknown) =>
        deps.logger.error({ erasureId: payload.erasureId, err: markErr }, "could not mark the author erasure failed"),
      );
    }
    throw err;
  }
};
