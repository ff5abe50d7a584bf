import type { Logger } from "./logger.js";

/**
 * Error reporting for Redis connections and the BullMQ queues and workers built on them.
 *
 * ioredis retries a lost connection for ever and emits `error` on every failed attempt
 * (every 0.2–5 s), so errors are rate-limited: at most one line per connection and error
 * code per `windowMs` (30 s), the next line carrying how many were suppressed meanwhile.
 * A connection that has never been ready yet stays quiet for its first `graceMs` (5 s) of
 * errors, so a Redis that comes up a moment after the process logs nothing. Lines carry
 * the error's type, code and message only, never the error object: ioredis errors can
 * hold the connection options or the arguments of an AUTH command. URLs in messages are
 * written without their password.
 *
 * One reporter per connection: the Queues and Workers sharing that connection report
 * through it (`reportRedisError`), so one outage is one line, not one per queue.
 */
export interface RedisErrorOptions {
  /** At most one line per error code within this window (default 30 s). */
  windowMs?: number;
  /** Before the connection was first ready, errors are logged only after this long (default 5 s). */
  graceMs?: number;
  now?: () => number;
}

interface Slot {
  loggedAt: number;
  suppressed: number;
}

export interface RedisErrorReporter {
  /** Logs the error if its code was not logged within the window; otherwise counts it. */
  report: (err: unknown, fields?: Record<string, unknown>) => void;
  /** Marks the connection as having been ready (ends the start-up grace). */
  ready: () => void;
}

const REDACTED = "[redacted]";

/** `scheme://user:password@` → `scheme://user:[redacted]@` (and `scheme://secret@` → `scheme://[redacted]@`). */
export function redactUrls(text: string): string {
  return text.replace(
    /\b([a-z][a-z0-9+.-]*:\/\/)([^\s/@:]*)(?::([^\s/@]*))?@/gi,
    (_match, scheme: string, user: string, password?: string) =>
      password === undefined ? `${scheme}${user ? REDACTED : ""}@` : `${scheme}${user}:${REDACTED}@`,
  );
}

/** A short, stable key for an error: its code (ECONNREFUSED, NOAUTH, ...) or its type and message. */
export function errorCode(err: unknown): string {
  const e = (err ?? {}) as { code?: unknown; name?: unknown; message?: unknown };
  if (typeof e.code === "string" && e.code) return e.code;
  const message = String(e.message ?? err ?? "");
  // Redis replies start with an upper-case code word: "NOAUTH Authentication required.", "OOM ...".
  const word = /^([A-Z][A-Z_]{2,})\b/.exec(message)?.[1];
  if (word) return word;
  return `${typeof e.name === "string" ? e.name : "Error"}: ${message.replace(/\d+/g, "#").slice(0, 80)}`;
}

/** The loggable part of an error: type, code and message (URLs redacted), nested causes of an AggregateError. */
export function describeError(err: unknown): { type: string; code?: string; message: string } {
  const e = (err ?? {}) as { code?: unknown; name?: unknown; message?: unknown; errors?: unknown };
  let message = typeof e.message === "string" ? e.message : String(err);
  if (!message && Array.isArray(e.errors)) message = e.errors.map((inner) => String((inner as Error)?.message ?? inner)).join("; ");
  return {
    type: typeof e.name === "string" ? e.name : typeof err,
    ...(typeof e.code === "string" ? { code: e.code } : {}),
    message: redactUrls(message).slice(0, 1000),
  };
}

export function createRedisErrorReporter(logger: Logger, connection: string, options: RedisErrorOptions = {}): RedisErrorReporter {
  const windowMs = options.windowMs ?? 30_000;
  const graceMs = options.graceMs ?? 5_000;
  const now = options.now ?? Date.now;
  const slots = new Map<string, Slot>();
  let wasReady = false;
  let firstErrorAt: number | undefined;
  return {
    ready: () => {
      wasReady = true;
    },
    report: (err, fields = {}) => {
      const at = now();
      firstErrorAt ??= at;
      const code = errorCode(err);
      let slot = slots.get(code);
      if (!slot) {
        slot = { loggedAt: Number.NEGATIVE_INFINITY, suppressed: 0 };
        slots.set(code, slot);
      }
      const quietStart = !wasReady && at - firstErrorAt < graceMs;
      if (quietStart || at - slot.loggedAt < windowMs) {
        slot.suppressed++;
        return;
      }
      const suppressed = slot.suppressed;
      slot.loggedAt = at;
      slot.suppressed = 0;
      logger.error(
        {
          connection,
          code,
          error: describeError(err),
          ...fields,
          ...(suppressed > 0 ? { suppressed } : {}),
          ...(wasReady ? {} : { never_ready: true }),
        },
        "redis error",
      );
    },
  };
}

type ErrorSource = {
  on(event: "error", listener: (err: Error) => void): unknown;
  once(event: "ready", listener: () => void): unknown;
};
const reporters = new WeakMap<object, RedisErrorReporter>();

/** Attaches a rate-limited error logger to a connection (replacing ioredis's crash on an unhandled 'error'). */
export function logRedisErrors(redis: ErrorSource, logger: Logger, connection: string, options?: RedisErrorOptions): RedisErrorReporter {
  const reporter = createRedisErrorReporter(logger, connection, options);
  reporters.set(redis, reporter);
  redis.once("ready", reporter.ready);
  redis.on("error", (err) => reporter.report(err));
  return reporter;
}

/**
 * Reports an error of a Queue or Worker through its connection's reporter (so it shares the
 * connection's rate limit). A connection without one (built outside the service's entry
 * points) drops it: the listener still keeps the error from crashing the process.
 */
export function reportRedisError(connection: object, err: unknown, fields?: Record<string, unknown>): void {
  reporters.get(connection)?.report(err, fields);
}
