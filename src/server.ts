import { createServer } from "node:http";
import { createApp } from "./app.js";
import { configOrExit } from "./platform/config.js";
import { closeDeps, createDeps } from "./platform/deps.js";
import { warnMissingSettings } from "./platform/missing-settings.js";
import { whenReady } from "./platform/redis.js";
import { installShutdown } from "./platform/shutdown.js";

/** Web process entry. */
const config = configOrExit("web");
const deps = createDeps(config, "web");
warnMissingSettings(deps.logger, config);
if (!(await whenReady(deps.redis, 5000))) deps.logger.warn("Redis is not reachable yet; queue operations answer 503 until it is");
const server = createServer(createApp(deps));
server.keepAliveTimeout = 65_000;
server.listen(config.PORT, config.HOST, () => {
  deps.logger.info({ port: config.PORT, host: config.HOST }, "web listening");
});

/** Requests in flight get this long to finish after SIGTERM; open streams are then cut. */
const DRAIN_MS = 10_000;
installShutdown(deps.logger, async (reason) => {
  // Stop accepting connections; idle keep-alive connections close now, busy ones after their response.
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  if (reason === "crash") server.closeAllConnections();
  const timer = setTimeout(() => {
    deps.logger.warn({ drain_ms: DRAIN_MS }, "requests still open at the drain bound are cut");
    server.closeAllConnections();
  }, DRAIN_MS);
  await closed;
  clearTimeout(timer);
  await closeDeps(deps);
});
