import type { Logger } from "./logger.js";

/** Closes everything once on SIGTERM/SIGINT; a second signal or a 25 s stall exits at once. */
export function installShutdown(logger: Logger, close: () => Promise<void>): void {
  let closing = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (closing) process.exit(1);
    closing = true;
    logger.info({ signal }, "shutting down");
    const timer = setTimeout(() => {
      logger.error("shutdown timed out");
      process.exit(1);
    }, 25_000);
    timer.unref();
    close()
      .then(() => process.exit(0))
      .catch((err: unknown) => {
        logger.error({ err }, "shutdown failed");
        process.exit(1);
      });
  };
  process.on("SIGTERM", onSignal);
  process.on("SIGINT", onSignal);
  process.on("unhandledRejection", (reason) => logger.error({ err: reason }, "unhandled rejection"));
}
