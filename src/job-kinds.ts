import { recordJobEvent } from "./delivery/webhooks/dispatch.js";
import { requeueWebhookDeliveries } from "./delivery/webhooks/requeue.js";
import { requeueLostAnalyses } from "./insights/analysis/requeue.js";
import { CANCEL_PLATFORM_PROGRESS } from "./intake/collection/progress.js";
import { requeueStalled } from "./intake/collection/requeue.js";
import { requeueUnenriched } from "./intake/ingest/requeue.js";
import { failLostSyncs } from "./intake/notes/requeue.js";
import { requeueLostSweeps } from "./intake/sweeps/requeue.js";
import { relayStaged } from "./jobs/outbox.js";
import { addRecovery, defineKind, onJobEnd } from "./jobs/registry.js";
import { requeueLostRuns } from "./workflows/runs/requeue.js";

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
