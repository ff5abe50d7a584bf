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

/** Whole seconds from a `Retry-After` value (delta-seconds or an HTTP date); undefined when absent or unreadable. */
export function parseRetryAfterSeconds(value: string | null | undefined, now = Date.now()): number | undefined {
  const text = value?.trim();
  if (!text) return undefined;
  if (/^\d+$/.test(text)) return Number(text);
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - now) / 1000));
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
