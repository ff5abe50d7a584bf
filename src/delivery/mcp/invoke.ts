import type { AuthContext, Authenticator, Credential } from "../../platform/auth.js";
import type { AppDeps } from "../../platform/deps.js";
import { type AppError, ValidationFailed } from "../../platform/errors.js";
import { toHttpError } from "../../platform/http/errors.js";
import { type AnyRoute, type HandlerResult, mayWrite, parsePath } from "../../platform/http/route.js";
import { parseInput } from "../../platform/validation.js";
import type { ToolMetrics } from "./metrics.js";

/**
 * A tool call runs the HTTP route it stands for, without HTTP: the route's credential rule
 * (`Authenticator.authenticate`), the caller's rate limit, the route's zod schemas for path,
 * query and body, the route's handler (which calls the domain's service), and a usage record
 * for keyed calls under the route's method and template, refused ones included. The steps
 * and their order are those of `mountRoutes`, so a tool answers what the route answers.
 */
export interface ToolServices {
  deps: AppDeps;
  authenticator: Authenticator;
  rateLimit: (auth: AuthContext | undefined) => Promise<void>;
  /** The routes the app mounted, by "METHOD /path" (e.g. "GET /agent/v1/context/recall"). */
  routes: ReadonlyMap<string, AnyRoute>;
  metrics: ToolMetrics;
}

/** One MCP request: who sent it and how to reach back to its client. */
export interface CallContext {
  services: ToolServices;
  credential: Credential | undefined;
  requestId: string;
  /** Aborted when the client cancels the call or its HTTP request closes. */
  signal: AbortSignal;
  /** Sends an MCP progress notification when the client asked for them (a progressToken); else nothing. */
  progress: (progress: number, total: number | undefined, message: string) => Promise<void>;
}

export interface ParsedInput {
  params: unknown;
  query: unknown;
  body: unknown;
  auth: AuthContext | undefined;
}

export interface Operation {
  /** The equivalent route, "METHOD /path" as the route table writes it. */
  route: string;
  params?: Record<string, unknown>;
  query?: Record<string, unknown>;
  body?: unknown;
  /**
   * Calls the service directly, for the few routes whose handler reads the HTTP request or
   * writes a stream itself; it receives what the route's schemas produced.
   */
  call?: (input: ParsedInput) => Promise<HandlerResult>;
}

export interface Answer {
  status: number;
  body: unknown;
  headers: Record<string, string>;
}

/**
 * A refused or failed call: the HTTP status of the equivalent route and its body (the 422
 * `detail` list, or `{detail, code}` with the error's extra fields).
 */
export class ToolFailure extends Error {
  override name = "ToolFailure";
  constructor(
    readonly status: number,
    readonly body: Record<string, unknown>,
  ) {
    super(typeof body.detail === "string" ? body.detail : `The call was refused with status ${status}.`);
  }

  static from(error: AppError | ValidationFailed): ToolFailure {
    if (error instanceof ValidationFailed) return new ToolFailure(422, { detail: error.issues });
    const retryAfter = Number(error.headers?.["Retry-After"]);
    return new ToolFailure(error.status, {
      detail: error.message,
      code: error.code,
      ...(error.extra ?? {}),
      ...(Number.isFinite(retryAfter) ? { retry_after: retryAfter } : {}),
    });
  }
}

/** A mode of the reference client this service has no capability for (yet). */
export const notServed = (detail: string) => new ToolFailure(501, { detail, code: "not_implemented" });

/** A refusal of the tool's own arguments, in the 422 shape, located under `arguments`. */
export function argumentError(path: (string | number)[], msg: string, type = "value_error"): ValidationFailed {
  return new ValidationFailed([{ loc: ["arguments", ...path], msg, type }]);
}

const NO_HTTP = (route: string) =>
  new Proxy({} as never, {
    get(_target, property) {
      throw new Error(
        `${route}: the route's handler reads the HTTP request (${String(property)}); its tool mode must call the service itself`,
      );
    },
  });

export async function invoke(ctx: CallContext, op: Operation): Promise<Answer> {
  const { services } = ctx;
  const route = services.routes.get(op.route);
  if (!route) throw notServed(`This deployment does not serve ${op.route}, which this mode needs.`);
  const method = route.method.toUpperCase();
  let keyAuth: AuthContext | undefined;
  try {
    const credential = "public" in route.auth ? undefined : ctx.credential;
    const auth = await services.authenticator.authenticate(credential, route.auth, (identified) => {
      keyAuth = identified;
    });
    await services.rateLimit(auth);

    const path = route.params ? parsePath(route.params, op.params ?? {}) : { params: op.params ?? {} };
    const query = route.query ? parseInput(route.query, op.query ?? {}, "query") : (op.query ?? {});
    const body = route.body ? parseInput(route.body, op.body, "body") : undefined;
    if (path.missing) throw path.missing;
    const input = { params: path.params, query, body, auth };

    // As mountRoutes: a call that may write keeps its caller's replica reads on the primary.
    const writes = mayWrite(route) && auth !== undefined;
    if (writes) await services.deps.reads.noteWrite(auth);
    const result = await (op.call ? op.call(input) : route.handler({ ...input, req: NO_HTTP(op.route), res: NO_HTTP(op.route) })).finally(
      () => (writes ? services.deps.reads.noteWrite(auth) : undefined),
    );
    const status = result?.status ?? 200;
    if (auth?.key) await services.authenticator.recordKeyUsage(auth, method, route.path, status);
    return { status, body: result?.body, headers: result?.headers ?? {} };
  } catch (err) {
    if (err instanceof ToolFailure) throw err;
    if (ctx.signal.aborted) {
      // The client left during a streamed analysis: the route records its stream's 200 then, too.
      if (keyAuth?.key) await services.authenticator.recordKeyUsage(keyAuth, method, route.path, 200).catch(() => undefined);
      throw err;
    }
    const httpError = toHttpError(err);
    const status = httpError instanceof ValidationFailed ? 422 : httpError.status;
    if (status >= 500) {
      services.deps.logger.error({ err, requestId: ctx.requestId, route: op.route, status }, "tool call failed");
    }
    if (keyAuth?.key) {
      await services.authenticator.recordKeyUsage(keyAuth, method, route.path, status).catch((usageErr: unknown) => {
        services.deps.logger.warn({ err: usageErr, requestId: ctx.requestId }, "could not record key usage");
      });
    }
    throw ToolFailure.from(httpError);
  }
}

/**
 * Query parameters from tool arguments, as HTTP would carry them: strings stay, numbers and
 * booleans become their text, absent and null are left out, anything else goes as it is
 * (for the route's schema to refuse).
 */
export function queryOf(args: Record<string, unknown>, fields: readonly string[]): Record<string, unknown> {
  const query: Record<string, unknown> = {};
  for (const field of fields) {
    const value = args[field];
    if (value === undefined || value === null) continue;
    query[field] = typeof value === "number" || typeof value === "boolean" ? String(value) : value;
  }
  return query;
}

/** The fields of `args` that are present (null included: the routes read it as absent). */
export function pick(args: Record<string, unknown>, fields: readonly string[]): Record<string, unknown> {
  const picked: Record<string, unknown> = {};
  for (const field of fields) if (args[field] !== undefined) picked[field] = args[field];
  return picked;
}

/** A path parameter the mode needs: a string, else a 422 naming the argument. */
export function requireString(args: Record<string, unknown>, field: string, why: string): string {
  const value = args[field];
  if (typeof value === "string" && value.length > 0) return value;
  if (value === undefined || value === null) throw argumentError([field], `Field required: ${why}`, "missing");
  throw argumentError([field], "Input should be a valid string", "string_type");
}
