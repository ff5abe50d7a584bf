import { reembedStored, reembedTargets } from "../src/insights/embed/reembed.js";
import { reembedStopKey } from "../src/insights/embed/reembed-command.js";
import type { Processor } from "./runtime.js";

/**
 * `embeddings.reembed.v1`: stored vectors of another model embedded again, chunk by chunk, with the rows done so far as
 * the job's progress; an operator's `reembed-stop` ends it after the current chunk (`reembed` resumes).
 */
export const reembedProcessor: Processor<"embeddings.reembed.v1"> = async (_payload, { deps, job }) => {
  const stopKey = reembedStopKey(deps.config);
  const result = await reembedStored(deps, reembedTargets(deps.config), {
    shouldStop: async () => (await deps.redis.get(stopKey)) !== null,
    onChunk: async (done) => {
      await job.updateProgress(done);
    },
  });
  if (result.status === "stopped") await deps.redis.del(stopKey);
  deps.logger.info({ ...result }, `re-embedding ${result.status}`);
  return result;
};
