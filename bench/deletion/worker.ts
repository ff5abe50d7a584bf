import { loadConfig } from "../../src/platform/config.js";
import { closeDeps, createDeps } from "../../src/platform/deps.js";
import { whenReady } from "../../src/platform/redis.js";
import { processors } from "../../workers/processors.js";
import { startWorkers } from "../../workers/runtime.js";

/**
 * The deletion bench's worker process (bench/deletion/index.ts forks it with the app's database and
 * Redis prefix in its environment): the worker's own processors on the `enrichment` queue, as the
 * worker process runs them, which is where `entity.delete.v1` runs beside the enrichment of what the
 * other tenants ingest meanwhile. Its own process, as in production, so the deletion's work does not
 * share the web process's event loop.
 */
const config = loadConfig();
const deps = createDeps(config, "bench-worker");
if (!(await whenReady(deps.redis, 5000))) throw new Error("Redis is not reachable");
const handles = startWorkers(deps, processors, { queues: ["enrichment"] });
process.send?.("ready");

process.on("SIGTERM", async () => {
  await handles.close({ drainMs: 5000 });
  await closeDeps(deps);
  process.exit(0);
});
