import type { NextFunction, Request, Response } from "express";
import type { AuthContext, Authenticator } from "../auth.js";
import { isDbUnavailable } from "../db.js";
import { AppError, notFound, ValidationFailed } from "../errors.js";
import type { Logger } from "../logger.js";
import { isRedisUnavailable } from "../redis.js";
import { ensureRetryAfter } from "./retry-after.js";

interface BodyParserError {
  type?: string;
  status?: number;
  body?: string;
  message?: string;
}

function fromBodyParser(err: BodyParserError): AppError | ValidationFailed | undefined {
  switch (err.type) {
    case "entity.parse.failed":
      return new ValidationFailed([{ loc: ["body"], msg: `JSON decode error: ${err.message ?? "malformed JSON"}`, type: "json_invalid" }]);
    case "entity.too.large":
      return new AppError("payload_too_large", "The request body is larger than this service accepts.");
    case "encoding.unsupported":
    case "charset.unsupported":
      return new AppError("unsupported_media_type", "The request body's encoding or charset is not supported; send UTF-8 JSON.");
    case "request.aborted":
    case "request.size.invalid":
    case "stream.encoding.set":
      return new AppError("bad_request", "The request body could not be read.");
    default:
      break;
  }
  // Other client errors the body reader raises without a type (e.g. a corrupt gzip body).
  const httpish = (err as { status?: unknown; expose?: unknown } | null) ?? {};
  if (err instanceof Error && httpish.expose === true && httpish.status === 400) {
    return new AppError("bad_request", "The request body could not be read or decompressed.");
  }
  return undefined;
}

/**
 * SQLSTATEs raised by the triggers that refuse what would attach to something being deleted, with what the
 * answer names: originals of an entity (migration 20261128130000); entities, analyses, knowledge records and
 * saved pages of a project (migration 20261128150000).
 */
const DELETED_CODES: Record<string, string> = { RE404: "Entity", RP404: "Project" };

function databaseCode(err: unknown): string | undefined {
  const e = err as { code?: unknown; meta?: { code?: unknown; driverAdapterError?: { cause?: { originalCode?: unknown } } } } | null;
  const codes = [e?.meta?.driverAdapterError?.cause?.originalCode, e?.meta?.code, e?.code];
  return codes.find((c): c is string => typeof c === "string" && Object.hasOwn(DELETED_CODES, c));
}

/** Maps anything thrown to the documented body: the spec's 422 shape or `{detail, code}`. */
export function toHttpError(err: unknown): AppError | ValidationFailed {
  if (err instanceof AppError || err instanceof ValidationFailed) return err;
  const parsed = fromBodyParser(err as BodyParserError);
  if (parsed) return parsed;
  // The router could not percent-decode a path parameter (e.g. "%E0%A4%A").
  if (err instanceof URIError) return new AppError("bad_request", "The request path is not validly percent-encoded.");
  // An original stored for an entity whose deletion was requested, or something attached to a project being deleted.
  const deleted = databaseCode(err);
  if (deleted) return notFound(DELETED_CODES[deleted] as string);
  if (isDbUnavailable(err)) {
    return new AppError("service_unavailable", "The database is unavailable; try again shortly.", {
      headers: { "Retry-After": "5" },
    });
  }
  if (isRedisUnavailable(err)) {
    return new AppError("service_unavailable", "The queue store is unavailable; try again shortly.", {
      headers: { "Retry-After": "5" },
    });
  }
  return new AppError("internal_error", "An internal error occurred; it has been logged.");
}

export function errorHandler(logger: Logger, authenticator: Authenticator) {
  return async (err: unknown, req: Request, res: Response, _next: NextFunction) => {
    const httpError = toHttpError(err);
    const requestId = res.locals.requestId as string | undefined;
    const status = httpError instanceof ValidationFailed ? 422 : httpError.status;
    if (status >= 500) {
      logger.error({ err, requestId, method: req.method, path: req.path, status }, "request failed");
    }
    const keyAuth = res.locals.keyAuth as AuthContext | undefined;
    if (keyAuth?.key) {
      const route = (res.locals.routeTemplate as string | undefined) ?? req.path;
      await authenticator.recordKeyUsage(keyAuth, req.method, route, status).catch((usageErr: unknown) => {
        logger.warn({ err: usageErr, requestId }, "could not record key usage");
      });
    }
    if (res.headersSent) {
      res.end();
      return;
    }
    if (httpError instanceof ValidationFailed) {
      res.status(422).json({ detail: httpError.issues });
      return;
    }
    if (httpError.headers) res.set(httpError.headers);
    ensureRetryAfter(res, httpError.status, httpError.code);
    res.status(httpError.status).json({ detail: httpError.message, code: httpError.code, ...(httpError.extra ?? {}) });
  };
}
