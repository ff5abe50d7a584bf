import { createEmbedder } from "../src/insights/embed/provider.js";
import { enrichContent } from "../src/insights/enrichment/service.js";
import type { Processor } from "./runtime.js";

/** `enrichment.content.v1`: embeds stored rows and splits them into opinion units. */
export const enrichmentProcessor: Processor<"enrichment.content.v1"> = async (payload, { deps }) =>
  enrichContent(deps.pool, createEmbedder(deps.config), payload.contentIds);
