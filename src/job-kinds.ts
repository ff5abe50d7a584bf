import { requeueLostAnalyses } from "./analysis/requeue.js";
import { CANCEL_PLATFORM_PROGRESS } from "./collection/progress.js";
import { requeueStalled } from "./collection/requeue.js";
import { requeueUnenriched } from "./ingest/requeue.js";
import { relayStaged } from "./jobs/outbox.js";
import { addRecovery, defineKind, onJobEnd } from "./jobs/registry.js";
import { failLostSyncs } from "./notes/requeue.js";
import { requeueLostRuns } from "./runs/requeue.js";
import { requeueLostSweeps } from "./sweeps/requeue.js";
import { recordJobEvent } from "./webhooks/dispatch.js";
import { requeueWebhookDeliveries } from "./webhooks/requeue.js";

/**
 * The job kinds, registered with the shared lifecycle (src/jobs/registry.ts), which knows no domain.
 * Imported for its effect by every process's entry (the web app, the workers, operator commands).
 */
// A cancelled collection job's platforms that are not final become `cancelled` with it.
defineKind("collection_job", { cancelAlsoSets: CANCEL_PLATFORM_PROGRESS });
defineKind("analysis", {});
defineKind("workflow_run", {});
defineKind("note_sync", {});
defineKind("sweep_run", {});

// Jobs staged with their rows but never sent (the job outbox) go first: the kinds' checks below then see them queued.
addRecovery({ name: "staged jobs", run: async (deps) => `staged jobs: sent ${await relayStaged(deps)}` });
addRecovery({ name: "collection jobs", run: requeueStalled });
addRecovery({ name: "analyses", run: requeueLostAnalyses });
addRecovery({ name: "workflow runs", run: requeueLostRuns });
addRecovery({ name: "meeting-note syncs", run: failLostSyncs });
addRecovery({ name: "enrichment", run: (deps) => requeueUnenriched(deps) });
addRecovery({ name: "evidence capture runs", run: requeueLostSweeps });
addRecovery({ name: "webhook deliveries", run: requeueWebhookDeliveries });

// Job ends of a workspace with webhook endpoints become deliveries.
onJobEnd(recordJobEvent);
