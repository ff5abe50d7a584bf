import type { AppDeps } from "../platform/deps.js";
import { deriveJobId } from "../platform/queues.js";

/**
 * The synthesis a collection job continues into when `collection_only` is false: an
 * `analyses` row asking the objective and its questions over the entity's evidence,
 * and an `analysis.run.v1` job for it (the shared contract with the analysis worker).
 *
 * Idempotent: the analysis carries `request_id = "collection-job:<job id>"`, unique per
 * user, so a job that is retried after creating it finds the same analysis; the
 * queue job id is derived from the analysis id, so it is enqueued once.
 */
export function analysisQuestion(objective: string, questions: string[]): string {
  if (questions.length === 0) return objective;
  return `${objective}\n\nQuestions:\n${questions.map((q) => `- ${q}`).join("\n")}`;
}

export async function startAnalysis(
  deps: Pick<AppDeps, "db" | "queues">,
  job: { id: string; userId: string; objective: string; questions: string[]; depth: string; platforms: string[] },
  entity: { id: string; workspaceId: string; projectId: string | null },
): Promise<string> {
  const requestId = `collection-job:${job.id}`;
  await deps.db.$executeRaw`
    INSERT INTO analyses (id, user_id, workspace_id, entity_id, project_id, request_id, question, platforms, depth, status, updated_at)
    VALUES (gen_random_uuid(), ${job.userId}::uuid, ${entity.workspaceId}::uuid, ${entity.id}::uuid, ${entity.projectId}::uuid,
      ${requestId}, ${analysisQuestion(job.objective, job.questions)}, ${job.platforms}::text[], ${job.depth}, 'queued', now())
    ON CONFLICT (user_id, request_id) DO NOTHING`;
  const rows = await deps.db.$queryRaw<{ id: string }[]>`
    SELECT id FROM analyses WHERE user_id = ${job.userId}::uuid AND request_id = ${requestId}`;
  const analysisId = rows[0]?.id;
  if (!analysisId) throw new Error(`analysis for collection job ${job.id} could not be created`);
  await deps.queues.enqueue("analysis.run.v1", { analysisId }, { jobId: deriveJobId("analysis", analysisId) });
  return analysisId;
}
