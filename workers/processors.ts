import { contextEmbedProcessor } from "./context-embed.js";
import { enrichmentProcessor } from "./enrichment.js";
import type { ProcessorTable } from "./runtime.js";

/** Every job name the worker process handles, with its processor. */
export const processors: ProcessorTable = {
  "enrichment.content.v1": enrichmentProcessor,
  "context.embed.v1": contextEmbedProcessor,
};
