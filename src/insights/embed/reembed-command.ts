import { jobIds } from "../../jobs/ids.js";
import type { AppDeps } from "../../platform/deps.js";
import { modelsLeft, reembedProgress, reembedTargets } from "./reembed.js";

/**
 * The operator's side of re-embedding (src/insights/embed/reembed.ts): start or resume it, see how far it is,
 * stop it. The progress is read from the rows themselves, so it is right whether a run is going, stopped or
 * lost; the job's own progress (rows this run did) is added when a run is going.
 */

/** The Redis key that asks a running re-embedding to stop after its current chunk. */
export const reembedStopKey = (config: AppDeps["config"]) => `${config.REDIS_PREFIX}:reembed:stop`;

const plural = (n: number, what: string) => `${n.toLocaleString("en")} ${what}${n === 1 ? "" : "s"}`;

async function progressLine(deps: Pick<AppDeps, "db" | "config">): Promise<string> {
  const targets = reembedTargets(deps.config);
  const p = await reembedProgress(deps, targets);
  const left = await modelsLeft(deps, targets);
  const of = (rows: { model: string | null; n: number }[]) =>
    rows.length === 0 ? "" : ` (${rows.map((r) => `${r.model ?? "no vector"}: ${r.n.toLocaleString("en")}`).join(", ")})`;
  return (
    `pages: ${plural(p.pages.done, "page")} of ${p.pages.model}, ${p.pages.left.toLocaleString("en")} left${of(left.pages)}; ` +
    `stored originals: ${plural(p.originals.done, "row")} of ${p.originals.model}, ${p.originals.left.toLocaleString("en")} left${of(left.originals)}`
  );
}

/** Queues the re-embedding (or finds it queued or running already) and says what is left. */
export async function queueReembed(deps: Pick<AppDeps, "db" | "config" | "queues" | "redis">): Promise<string> {
  await deps.redis.del(reembedStopKey(deps.config));
  const existing = await deps.queues.get("enrichment").getJob(jobIds.reembed());
  const state = existing ? await existing.getState() : undefined;
  if (existing && (state === "completed" || state === "failed")) await existing.remove();
  const already = state === "active" || state === "waiting" || state === "delayed" || state === "prioritized";
  if (!already) await deps.queues.enqueue("embeddings.reembed.v1", {}, { jobId: jobIds.reembed() });
  return `re-embedding ${already ? `already ${state}` : "queued"}; ${await progressLine(deps)}. Follow it with: npm run admin -- reembed-status`;
}

/** How far re-embedding is, and whether a run is going. */
export async function reembedStatus(deps: Pick<AppDeps, "db" | "config" | "queues">): Promise<string> {
  const job = await deps.queues.get("enrichment").getJob(jobIds.reembed());
  const state = job ? await job.getState() : "not queued";
  const progress = job?.progress && typeof job.progress === "object" ? (job.progress as { pages?: number; originals?: number }) : null;
  const run = progress ? ` (this run: ${plural(progress.pages ?? 0, "page")}, ${plural(progress.originals ?? 0, "original")})` : "";
  return `re-embedding ${state}${run}; ${await progressLine(deps)}`;
}

/** Asks a running re-embedding to stop after its chunk, or takes a queued one off the queue. Nothing done is lost. */
export async function stopReembed(deps: Pick<AppDeps, "db" | "config" | "queues" | "redis">): Promise<string> {
  const job = await deps.queues.get("enrichment").getJob(jobIds.reembed());
  const state = job ? await job.getState() : undefined;
  if (state === "active") {
    await deps.redis.set(reembedStopKey(deps.config), "1", "EX", 86_400);
    return `re-embedding asked to stop after its current chunk; ${await progressLine(deps)}. Resume with: npm run admin -- reembed`;
  }
  if (job && (state === "waiting" || state === "delayed" || state === "prioritized")) {
    await job.remove();
    return `re-embedding taken off the queue before it started; ${await progressLine(deps)}`;
  }
  return `no re-embedding is queued or running; ${await progressLine(deps)}`;
}
