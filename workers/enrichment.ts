import { createBulkEmbedder } from "../src/insights/embed/provider.js";
import { type AnalysisPool, createAnalysisPool } from "../src/insights/enrichment/analysis-pool.js";
import { adaptTrackerKinds, queueTrackerKinds, trackerMemoryOf } from "../src/insights/enrichment/kind-adaptation.js";
import { reanalyseContent } from "../src/insights/enrichment/reanalyse.js";
import { enrichContent } from "../src/insights/enrichment/service.js";
import { enrichThreadsOf } from "../src/platform/config.js";
import type { Processor } from "./runtime.js";

/** The process's analysis threads, started by its first enrichment job (none in a process that runs none). */
let analysis: AnalysisPool | undefined;
const threads = (config: Parameters<typeof enrichThreadsOf>[0]) => {
  analysis ??= createAnalysisPool(enrichThreadsOf(config));
  return analysis;
};

/**
 * `enrichment.content.v1`: embeds stored rows and splits them into opinion units, on the process's analysis threads;
 * then queues the kind adaptation of the issue trackers they belong to.
 */
export const enrichmentProcessor: Processor<"enrichment.content.v1"> = async (payload, { deps }) => {
  const result = await enrichContent(
    deps.pool,
    createBulkEmbedder(deps.config),
    payload.contentIds,
    threads(deps.config).analyse,
    deps.config.ENRICH_CHUNK_ROWS,
  );
  if (result.enriched > 0) await queueTrackerKinds({ ...deps, memory: trackerMemoryOf(deps) }, payload.contentIds);
  return result;
};

/** `enrichment.reanalyse.v1`: stored rows' units and feedback kind again, by the current analyser. */
export const reanalysisProcessor: Processor<"enrichment.reanalyse.v1"> = async (payload, { deps }) => {
  const result = await reanalyseContent(deps.pool, payload.contentIds, threads(deps.config).analyse, deps.config.ENRICH_CHUNK_ROWS);
  if (result.reanalysed > 0) await queueTrackerKinds({ ...deps, memory: trackerMemoryOf(deps) }, payload.contentIds);
  return result;
};

/** `enrichment.kinds.v1`: a tracker's unlabelled sources read the way its labelled ones were triaged. */
export const kindAdaptationProcessor: Processor<"enrichment.kinds.v1"> = async (payload, { deps }) => {
  return adaptTrackerKinds(deps.pool, payload, threads(deps.config).kinds, undefined, trackerMemoryOf(deps));
};

/** Stops the analysis threads (at shutdown, after the workers have drained). */
export async function closeEnrichmentThreads(): Promise<void> {
  const pool = analysis;
  analysis = undefined;
  await pool?.close();
}
