/**
 * One error type for expected failures. Its `code` comes from a closed set so that
 * clients can branch on it; the HTTP status travels with it.
 */
export const ERROR_CODES = {
  bad_request: 400,
  scope_required: 400,
  unauthorized: 401,
  invalid_token: 401,
  bearer_required: 401,
  key_revoked: 401,
  insufficient_credits: 402,
  forbidden: 403,
  insufficient_scope: 403,
  raw_export_disabled: 403,
  not_found: 404,
  route_not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  idempotency_conflict: 409,
  stale_quote: 409,
  quote_expired: 409,
  approval_required: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  rate_limited: 429,
  internal_error: 500,
  upstream_error: 502,
  provider_unauthorized: 502,
  upstream_unavailable: 503,
  service_unavailable: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

export class AppError extends Error {
  override name = "AppError";
  readonly code: ErrorCode;
  readonly status: number;
  readonly extra: Record<string, unknown> | undefined;
  readonly headers: Record<string, string> | undefined;

  constructor(
    code: ErrorCode,
    detail: string,
    options: { extra?: Record<string, unknown>; headers?: Record<string, string>; cause?: unknown } = {},
  ) {
    super(detail, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.status = ERROR_CODES[code];
    this.extra = options.extra;
    this.headers = options.headers;
  }
}

export const notFound = (what: string) => new AppError("not_found", `${what} was not found.`);

/** One element of the spec's 422 `detail` array. */
export interface ValidationIssue {
  loc: (string | number)[];
  msg: string;
  type: string;
}

export class ValidationFailed extends Error {
  override name = "ValidationFailed";
  constructor(readonly issues: ValidationIssue[]) {
    super(issues.map((i) => `${i.loc.join(".")}: ${i.msg}`).join("; "));
  }
}

/** Wraps anything thrown that is not an Error, once, at a boundary. */
export function toError(thrown: unknown): Error {
  if (thrown instanceof Error) return thrown;
  return new Error(typeof thrown === "string" ? thrown : JSON.stringify(thrown));
}
