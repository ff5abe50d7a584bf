import type { Collector } from "../../src/intake/collection/collectors/types.js";
import { collectionProcessor } from "../../src/intake/collection/runner.js";
import { loadConfig } from "../../src/platform/config.js";
import { closeDeps, createDeps } from "../../src/platform/deps.js";
import { startWorkers } from "../../workers/runtime.js";

/**
 * The benchmark's worker process: the real `collection.run.v1` processor (claim, fenced
 * progress writes, coverage record, completion) with a no-op collector on `web` that
 * answers an empty last page at once, so the figure is the job platform's own cost.
 */
const noop: Collector = {
  platform: "web",
  blockedReason: () => null,
  describe: () => "bench",
  fetchPage: async () => ({ sources: [], next: null }),
};

const config = loadConfig();
const deps = createDeps(config, "bench-worker");
const concurrency = Number(process.env.BENCH_WORKER_CONCURRENCY ?? 32);
const handles = startWorkers(deps, { "collection.run.v1": collectionProcessor({ collectors: { web: noop } }) }, { concurrency });
process.send?.("ready");

process.on("SIGTERM", async () => {
  await handles.close();
  await closeDeps(deps);
  process.exit(0);
});
