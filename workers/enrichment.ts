import { createEmbedder } from "../src/insights/embed/provider.js";
import { type AnalysisPool, createAnalysisPool } from "../src/insights/enrichment/analysis-pool.js";
import { reanalyseContent } from "../src/insights/enrichment/reanalyse.js";
import { enrichContent } from "../src/insights/enrichment/service.js";
import { enrichThreadsOf } from "../src/platform/config.js";
import type { Processor } from "./runtime.js";

/** The process's analysis threads, started by its first enrichment job (none in a process that runs none). */
let analysis: AnalysisPool | undefined;
const analyser = (config: Parameters<typeof enrichThreadsOf>[0]) => {
  analysis ??= createAnalysisPool(enrichThreadsOf(config));
  return analysis.analyse;
};

/** `enrichment.content.v1`: embeds stored rows and splits them into opinion units, on the process's analysis threads. */
export const enrichmentProcessor: Processor<"enrichment.content.v1"> = async (payload, { deps }) => {
  return enrichContent(deps.pool, createEmbedder(deps.config), payload.contentIds, analyser(deps.config), deps.config.ENRICH_CHUNK_ROWS);
};

/** `enrichment.reanalyse.v1`: stored rows' units and feedback kind again, by the current analyser. */
export const reanalysisProcessor: Processor<"enrichment.reanalyse.v1"> = async (payload, { deps }) => {
  return reanalyseContent(deps.pool, payload.contentIds, analyser(deps.config), deps.config.ENRICH_CHUNK_ROWS);
};

/** Stops the analysis threads (at shutdown, after the workers have drained). */
export async function closeEnrichmentThreads(): Promise<void> {
  const pool = analysis;
  analysis = undefined;
  await pool?.close();
}
