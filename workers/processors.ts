import "../src/job-kinds.js";
import { collectionProcessor } from "../src/intake/collection/runner.js";
import { analysisProcessor } from "./analysis.js";
import { contextEmbedProcessor } from "./context-embed.js";
import { enrichmentProcessor, kindAdaptationProcessor, reanalysisProcessor } from "./enrichment.js";
import { entityDeletionProcessor } from "./entity-deletion.js";
import { erasureProcessor } from "./erasures.js";
import { notesSyncProcessor } from "./notes-sync.js";
import { projectDeletionProcessor } from "./project-deletion.js";
import { reembedProcessor } from "./reembed.js";
import { retentionTickProcessor } from "./retention.js";
import { routinesTickProcessor } from "./routines.js";
import type { ProcessorTable } from "./runtime.js";
import { searchIndexProcessor } from "./search-index.js";
import { sweepProcessor } from "./sweeps.js";
import { webhookDeliverProcessor } from "./webhooks.js";
import { workflowRunProcessor } from "./workflow-run.js";

/** Every job name the worker process handles, with its processor. */
export const processors: ProcessorTable = {
  "collection.run.v1": collectionProcessor(),
  "analysis.run.v1": analysisProcessor,
  "enrichment.content.v1": enrichmentProcessor,
  "enrichment.reanalyse.v1": reanalysisProcessor,
  "enrichment.kinds.v1": kindAdaptationProcessor,
  "sweep.run.v1": sweepProcessor,
  "erasure.run.v1": erasureProcessor,
  "entity.delete.v1": entityDeletionProcessor,
  "project.delete.v1": projectDeletionProcessor,
  "context.embed.v1": contextEmbedProcessor,
  "embeddings.reembed.v1": reembedProcessor,
  "notes.sync.v1": notesSyncProcessor,
  "workflow.run.v1": workflowRunProcessor,
  "routines.tick.v1": routinesTickProcessor,
  "retention.tick.v1": retentionTickProcessor,
  "search.recent-index.v1": searchIndexProcessor,
  "webhook.deliver.v1": webhookDeliverProcessor,
};
