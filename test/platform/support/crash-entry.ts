import { loadConfig } from "../../../src/platform/config.js";
import { closeDeps, createDeps } from "../../../src/platform/deps.js";
import { whenReady } from "../../../src/platform/redis.js";
import { installShutdown } from "../../../src/platform/shutdown.js";

/**
 * A process entry for the process-hygiene tests: starts like the service's entries (config,
 * connections, the shutdown hooks), logs "started", then fails as `argv[2]` says:
 * `exception` throws from a timer, `rejection` leaves a rejected promise unhandled. The
 * error's message holds a Redis URL with a password, which must not reach the log.
 */
const config = loadConfig();
const deps = createDeps(config, "crash-entry");
installShutdown(deps.logger, () => closeDeps(deps));
await whenReady(deps.redis, 5000);
// Work that keeps the process alive, as a server or a worker would.
setInterval(() => undefined, 1000);
deps.logger.info("started");

const failure = new Error("lost redis://svc:hunter2-secret@cache.internal:6379 mid-request");
if (process.argv[2] === "exception") {
  setTimeout(() => {
    throw failure;
  }, 20);
} else {
  setTimeout(() => void Promise.reject(failure), 20);
}
