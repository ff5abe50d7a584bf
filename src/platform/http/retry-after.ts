import type { Response } from "express";
import type { ErrorCode } from "../errors.js";

/**
 * `Retry-After` on every 503 and 429 the API sends. An answer that is about an upstream
 * provider passes the provider's own value on when it gave one (`retryAfterHeader`); any
 * 503 or 429 that names none gets the default of its kind here, applied in one place for
 * errors (the error handler) and for route answers (the route mounter).
 */
const DEFAULT_SECONDS: Partial<Record<ErrorCode, number>> = {
  // Our own dependency (database, Redis, configuration): worth trying again soon.
  service_unavailable: 5,
  // An upstream provider that said nothing about when to come back.
  upstream_unavailable: 30,
  // Rate limits always name their window; this is only a floor for a missing value.
  rate_limited: 60,
};
const FALLBACK_SECONDS = 5;

export const needsRetryAfter = (status: number) => status === 503 || status === 429;

/**
 * Milliseconds from a `Retry-After` value (delta-seconds, leniently with a fraction, or an HTTP
 * date; a date in the past is 0); undefined when absent or unreadable. Every reader of an
 * upstream's `Retry-After` (collectors, meeting notes, search, embeddings) goes through here.
 */
export function parseRetryAfterMs(value: string | null | undefined, now = Date.now()): number | undefined {
  const text = value?.trim();
  if (!text) return undefined;
  if (/^\d+(\.\d+)?$/.test(text)) return Math.round(Number(text) * 1000);
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** Whole seconds (rounded up) from a `Retry-After` value; undefined when absent or unreadable. */
export function parseRetryAfterSeconds(value: string | null | undefined, now = Date.now()): number | undefined {
  const ms = parseRetryAfterMs(value, now);
  return ms === undefined ? undefined : Math.ceil(ms / 1000);
}

/** The header that passes a provider's `Retry-After` on, or nothing when it gave none. */
export function retryAfterHeader(seconds: number | null | undefined): { "Retry-After": string } | Record<string, never> {
  return typeof seconds === "number" && Number.isFinite(seconds) && seconds >= 0 ? { "Retry-After": String(Math.ceil(seconds)) } : {};
}

/** Sets the default `Retry-After` on a 503/429 answer that has none yet. */
export function ensureRetryAfter(res: Response, status: number, code?: ErrorCode): void {
  if (!needsRetryAfter(status) || res.get("Retry-After") !== undefined) return;
  res.set("Retry-After", String((code && DEFAULT_SECONDS[code]) ?? FALLBACK_SECONDS));
}
