import { submitAnalysis } from "../../insights/analysis/jobs.js";
import type { RunInput } from "../../insights/analysis/schemas.js";
import { COLLECTION_JOB_REQUEST_PREFIX } from "../../insights/analysis/service.js";
import type { AppDeps } from "../../platform/deps.js";

/**
 * The synthesis a collection job continues into when `collection_only` is false: an
 * analysis (submitted as `POST /agent/v1/analysis/run` submits one) asking the objective and its questions over the entity's stored evidence on the
 * job's platforms, and an `analysis.run.v1` job for it under the same queue job id the
 * analysis route uses.
 *
 * Idempotent: the analysis carries `request_id = "collection-job:<job id>"`, so a job
 * retried after creating it gets the same analysis back, and the queue job id derived
 * from the analysis id enqueues it once.
 */
export function analysisQuestion(objective: string, questions: string[]): string {
  if (questions.length === 0) return objective;
  return `${objective}\n\nQuestions:\n${questions.map((q) => `- ${q}`).join("\n")}`;
}

export async function startAnalysis(
  deps: Pick<AppDeps, "db" | "queues">,
  job: { id: string; userId: string; entityId: string; objective: string; questions: string[]; depth: string; platforms: string[] },
): Promise<string> {
  const input: RunInput = {
    question: analysisQuestion(job.objective, job.questions),
    entity_id: job.entityId,
    depth: job.depth === "deep" ? "deep" : "brief",
    request_id: `${COLLECTION_JOB_REQUEST_PREFIX}${job.id}`,
    // The analysis scope filters stored rows by these platform names as they are.
    platforms: job.platforms as RunInput["platforms"],
    project_id: undefined,
    search_mode: undefined,
    provided_sources: undefined,
  };
  const { analysis } = await submitAnalysis(deps, job.userId, input);
  return analysis.id;
}
