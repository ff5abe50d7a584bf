import { startRetentionScheduler } from "../src/governance/deletion/scheduler.js";
import { startSearchIndexScheduler } from "../src/insights/search/scheduler.js";
import { startOutboxRelay } from "../src/jobs/outbox.js";
import { configOrExit } from "../src/platform/config.js";
import { closeDeps, createDeps } from "../src/platform/deps.js";
import { installShutdown } from "../src/platform/shutdown.js";
import { startRoutineScheduler } from "../src/workflows/routines/scheduler.js";
import { closeEnrichmentThreads } from "./enrichment.js";
import { processors } from "./processors.js";
import { startWorkers } from "./runtime.js";

/**
 * Worker process entry: starts one BullMQ Worker per queue. On SIGTERM it takes no new job and
 * waits for the running ones up to WORKER_LOCK_DURATION_MS (a job still running then is left to
 * the stalled-job check); after a crash it closes without waiting and exits 1.
 */
const config = configOrExit("worker");
const deps = createDeps(config, "worker");
const handles = startWorkers(deps, processors);
const routines = startRoutineScheduler(deps);
// Workspace purges and retention (src/governance/deletion/scheduler.ts).
const retention = startRetentionScheduler(deps);
// The full-text index of the newest originals (src/insights/search/recent-index.ts).
const searchIndex = startSearchIndexScheduler(deps);
// Jobs staged in a transaction whose send after commit did not happen (src/jobs/outbox.ts).
const outbox = startOutboxRelay(deps, { intervalMs: config.OUTBOX_RELAY_MS, graceMs: config.OUTBOX_RELAY_MS });
deps.logger.info({ queues: handles.workers.map((w) => w.name) }, "worker started");

installShutdown(
  deps.logger,
  async (reason) => {
    await routines.close();
    await retention.close();
    await searchIndex.close();
    await outbox.close();
    await handles.close(reason === "signal" ? { drainMs: config.WORKER_LOCK_DURATION_MS } : { force: true });
    await closeEnrichmentThreads();
    await closeDeps(deps);
  },
  // The drain's bound, then closing the connections.
  { signalTimeoutMs: config.WORKER_LOCK_DURATION_MS + 10_000 },
);
