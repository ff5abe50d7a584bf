import type { Logger } from "./logger.js";
import { redactUrls } from "./redis-errors.js";

/**
 * How a process ends.
 * - SIGTERM/SIGINT: `close("signal")` drains (the entry decides how long its parts wait) and the
 *   process exits 0; a second signal, a failed close or one outlasting `signalTimeoutMs` exits 1.
 *   One signal from outside often arrives twice: a terminal's Ctrl-C (or a platform's SIGTERM)
 *   reaches every process of the group, and `npm start`'s supervisor, which cannot tell, sends it
 *   on once more. So the first repeat within `duplicateSignalMs` of the first signal is that same
 *   stop and is ignored; a signal after that window, or a third one, still exits at once.
 * - An uncaught exception or an unhandled rejection: logged at fatal, then `close("crash")`
 *   (nothing waits for running work) for at most `crashTimeoutMs`, and the process exits 1 so
 *   its supervisor starts a fresh one. A process in an unknown state does not keep serving.
 */
export type CloseReason = "signal" | "crash";

export interface ShutdownOptions {
  /** Longest a signal's close may take before the process exits anyway (default 25 s). */
  signalTimeoutMs?: number;
  /** Longest the close after a crash may take (default 3 s). */
  crashTimeoutMs?: number;
  /** A repeat of the stop signal within this long of the first is the same stop (default 1 s). */
  duplicateSignalMs?: number;
}

/** A thrown value as a log field: type, message and stack, with passwords in URLs redacted. */
export function crashDetails(value: unknown): { type: string; message: string; stack?: string } {
  if (value instanceof Error) {
    return {
      type: value.name,
      message: redactUrls(value.message),
      ...(value.stack ? { stack: redactUrls(value.stack) } : {}),
    };
  }
  return { type: typeof value, message: redactUrls(String(value)) };
}

export function installShutdown(logger: Logger, close: (reason: CloseReason) => Promise<void>, options: ShutdownOptions = {}): void {
  const signalTimeoutMs = options.signalTimeoutMs ?? 25_000;
  const crashTimeoutMs = options.crashTimeoutMs ?? 3_000;
  const duplicateSignalMs = options.duplicateSignalMs ?? 1_000;
  let closing: CloseReason | undefined;
  let firstSignalAt = 0;
  let duplicateIgnored = false;

  const onSignal = (signal: NodeJS.Signals) => {
    if (closing === "signal" && !duplicateIgnored && Date.now() - firstSignalAt < duplicateSignalMs) {
      duplicateIgnored = true;
      logger.info({ signal }, "the stop signal arrived again (the process group's and the supervisor's); still shutting down");
      return;
    }
    if (closing) {
      logger.warn({ signal }, "second signal while shutting down; exiting now");
      process.exit(1);
    }
    closing = "signal";
    firstSignalAt = Date.now();
    logger.info({ signal }, "shutting down");
    const timer = setTimeout(() => {
      logger.error({ timeout_ms: signalTimeoutMs }, "shutdown timed out");
      process.exit(1);
    }, signalTimeoutMs);
    timer.unref();
    close("signal")
      .then(() => {
        logger.info("shut down");
        process.exit(0);
      })
      .catch((err: unknown) => {
        logger.error({ error: crashDetails(err) }, "shutdown failed");
        process.exit(1);
      });
  };

  const onCrash = (what: "uncaught exception" | "unhandled rejection", value: unknown) => {
    logger.fatal({ error: crashDetails(value) }, `${what}; the process exits`);
    if (closing === "crash") return; // already on its way out
    closing = "crash";
    // Not unref'd: the process ends at this bound even if nothing else keeps it alive.
    setTimeout(() => process.exit(1), crashTimeoutMs);
    close("crash")
      .catch((err: unknown) => logger.error({ error: crashDetails(err) }, "close after a crash failed"))
      .finally(() => process.exit(1));
  };

  process.on("SIGTERM", onSignal);
  process.on("SIGINT", onSignal);
  process.on("uncaughtException", (err) => onCrash("uncaught exception", err));
  process.on("unhandledRejection", (reason) => onCrash("unhandled rejection", reason));
}
