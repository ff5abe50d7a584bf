import { loadConfig } from "../src/platform/config.js";
import { closeDeps, createDeps } from "../src/platform/deps.js";
import { installShutdown } from "../src/platform/shutdown.js";
import { startRoutineScheduler } from "../src/routines/scheduler.js";
import { processors } from "./processors.js";
import { startWorkers } from "./runtime.js";

/** Worker process entry: starts one BullMQ Worker per queue and closes them on SIGTERM. */
const config = loadConfig();
const deps = createDeps(config, "worker");
const handles = startWorkers(deps, processors);
const routines = startRoutineScheduler(deps);
deps.logger.info({ queues: handles.workers.map((w) => w.name) }, "worker started");

installShutdown(deps.logger, async () => {
  await routines.close();
  await handles.close();
  await closeDeps(deps);
});
