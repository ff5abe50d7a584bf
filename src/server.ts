import { createServer } from "node:http";
import { createApp } from "./app.js";
import { loadConfig } from "./platform/config.js";
import { closeDeps, createDeps } from "./platform/deps.js";
import { warnMissingSettings } from "./platform/missing-settings.js";
import { whenReady } from "./platform/redis.js";
import { installShutdown } from "./platform/shutdown.js";

/** Web process entry. */
const config = loadConfig();
const deps = createDeps(config, "web");
warnMissingSettings(deps.logger, config);
if (!(await whenReady(deps.redis, 5000))) deps.logger.warn("Redis is not reachable yet; queue operations answer 503 until it is");
const server = createServer(createApp(deps));
server.keepAliveTimeout = 65_000;
server.listen(config.PORT, config.HOST, () => {
  deps.logger.info({ port: config.PORT, host: config.HOST }, "web listening");
});

installShutdown(deps.logger, async () => {
  await new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeIdleConnections();
  });
  await closeDeps(deps);
});
