import type { NextFunction, Request, Response, Router } from "express";
import type { z } from "zod";
import type { AuthContext, AuthRule } from "../auth.js";
import { type AppError, notFound, ValidationFailed } from "../errors.js";
import type { Role } from "../roles.js";
import { parseInput, pathIds } from "../validation.js";
import type { HttpServices } from "./context.js";
import { ensureRetryAfter } from "./retry-after.js";

/**
 * Routes are data: method, path, credential rule, zod schemas and a handler. `mount`
 * wires them into Express (authenticate → validate → handle → send) and the same
 * table feeds the OpenAPI document, so the description never drifts from the checks.
 */
export type Method = "get" | "post" | "put" | "patch" | "delete";

/**
 * Who may call a route. A workspace role (src/platform/roles.ts) is the least role, in the workspace the
 * request touches, that the route needs: a member below it gets 403 `forbidden` and a non-member 404, as
 * for an unknown id. `account` routes act on the caller's own account (keys, saved context, the list of
 * their workspaces, public-evidence search) and check no role; `public` routes take no credential.
 */
export type RouteRole = Role | "account" | "public";

export interface ResponseSpec {
  description: string;
  schema?: z.ZodType;
  contentType?: string;
}

export interface HandlerInput<B, Q, P> {
  body: B;
  query: Q;
  params: P;
  auth: AuthContext | undefined;
  /** Raw request/response, for the few handlers that stream (SSE) or read headers. */
  req: Request;
  res: Response;
}

export interface HandlerResult {
  status?: number;
  body?: unknown;
  headers?: Record<string, string>;
}

export interface RouteSpec<B extends z.ZodType = z.ZodType, Q extends z.ZodType = z.ZodType, P extends z.ZodType = z.ZodType> {
  method: Method;
  /** Express-style path (`/agent/v1/analysis/:analysis_id`). */
  path: string;
  summary: string;
  /** Longer prose for the OpenAPI document (Markdown). */
  description?: string;
  tags: string[];
  auth: AuthRule;
  /** The role the route needs (enforced by its service, shown in the API description, checked by test/reliability/roles.test.ts). */
  role: RouteRole;
  body?: B;
  query?: Q;
  params?: P;
  /** Extra request headers worth documenting (e.g. Idempotency-Key). */
  headers?: { name: string; required: boolean; description: string }[];
  responses: Record<number, ResponseSpec>;
  /**
   * A request that is not a GET but writes nothing (a search sent as POST for its body): it does
   * not mark its caller as a writer, so the caller's replica reads are not moved to the primary.
   */
  readOnly?: boolean;
  /** Return a result to send it as JSON; return nothing when the handler wrote the response itself. */
  handler: (input: HandlerInput<z.output<B>, z.output<Q>, z.output<P>>) => Promise<HandlerResult | undefined>;
}

// biome-ignore lint/suspicious/noExplicitAny: the table holds routes of every schema type
export type AnyRoute = RouteSpec<any, any, any>;

/** Whether a request to this route may write, so it marks its caller (read-your-writes, src/platform/replicas.ts). */
export const mayWrite = (route: Pick<AnyRoute, "method" | "readOnly">) => route.method !== "get" && route.readOnly !== true;

export function defineRoute<B extends z.ZodType = z.ZodType, Q extends z.ZodType = z.ZodType, P extends z.ZodType = z.ZodType>(
  spec: RouteSpec<B, Q, P>,
): RouteSpec<B, Q, P> {
  return spec;
}

export function mountRoutes(router: Router, routes: AnyRoute[], services: HttpServices): void {
  for (const route of routes) {
    router[route.method](route.path, async (req: Request, res: Response) => {
      res.locals.routeTemplate = route.path;
      // Public routes ignore credentials, so a stale or malformed header cannot fail them.
      const credential = "public" in route.auth ? undefined : services.readCredential(req);
      const auth = await services.authenticator.authenticate(credential, route.auth, (ctx) => {
        res.locals.keyAuth = ctx;
      });
      res.locals.auth = auth;
      // A credentialed answer (raw keys, exported rows) must not be kept by any cache; an
      // X-API-Key request, unlike one with Authorization, is otherwise storable by shared caches.
      if (auth) res.set("Cache-Control", "no-store");
      await services.rateLimit(req, auth);

      const path = route.params ? parsePath(route.params, req.params) : { params: req.params };
      const query = route.query ? parseInput(route.query, req.query ?? {}, "query") : req.query;
      const body = route.body ? parseInput(route.body, req.body, "body") : undefined;
      // A malformed id is an unknown id: 404, after the rest of the request was checked.
      if (path.missing) throw path.missing;
      const params = path.params;

      // A request that may write marks its caller before and after it runs (read-your-writes
      // for replica reads, src/platform/replicas.ts), before the answer leaves.
      const writes = mayWrite(route) && auth !== undefined ? services.noteWrite : undefined;
      await writes?.(auth);
      const result = await route.handler({ body, query, params, auth, req, res }).finally(() => writes?.(auth));
      if (result === undefined || res.headersSent) {
        // The handler wrote its own answer (a stream): record the keyed request once it is done.
        if (auth?.key) await services.authenticator.recordKeyUsage(auth, req.method, route.path, res.statusCode);
        return;
      }
      const status = result.status ?? 200;
      if (auth?.key) await services.authenticator.recordKeyUsage(auth, req.method, route.path, status);
      if (result.headers) res.set(result.headers);
      ensureRetryAfter(res, status);
      if (result.body === undefined) res.status(status).end();
      else res.status(status).json(result.body);
    });
  }

  // A request no route took for its method: note the methods every matching path serves,
  // so the final handler answers 405 with `Allow` (or 404 when no path matches at all).
  const methodsByPath = new Map<string, Set<string>>();
  for (const route of routes) {
    const methods = methodsByPath.get(route.path) ?? new Set<string>();
    methods.add(route.method.toUpperCase());
    if (route.method === "get") methods.add("HEAD");
    methodsByPath.set(route.path, methods);
  }
  for (const [path, methods] of methodsByPath) {
    router.all(path, (_req: Request, res: Response, next: NextFunction) => {
      const allowed = (res.locals.allowedMethods as Set<string> | undefined) ?? new Set<string>();
      for (const method of methods) allowed.add(method);
      res.locals.allowedMethods = allowed;
      next();
    });
  }
}

const METHOD_ORDER = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"];

/** The `Allow` value for a request that matched paths but none of their methods, if it did. */
export function allowedMethods(res: Response): string | undefined {
  const allowed = res.locals.allowedMethods as Set<string> | undefined;
  if (!allowed || allowed.size === 0) return undefined;
  return METHOD_ORDER.filter((m) => allowed.has(m)).join(", ");
}

/**
 * Path parameters. A value an id parameter (`pathId`) refuses names nothing: it comes back
 * as the 404 an unknown id answers. Any other refused parameter is a 422. Also used by the
 * MCP tools, which call routes without HTTP (`src/delivery/mcp/invoke.ts`).
 */
export function parsePath(schema: z.ZodType, raw: unknown): { params: unknown; missing?: AppError } {
  try {
    return { params: parseInput(schema, raw, "path") };
  } catch (err) {
    if (!(err instanceof ValidationFailed)) throw err;
    const shape = (schema as unknown as { shape?: Record<string, z.ZodType> }).shape ?? {};
    const resources = err.issues.map((issue) => {
      const field = shape[String(issue.loc[1])];
      return field ? pathIds.get(field)?.resource : undefined;
    });
    if (resources.length === 0 || resources.some((r) => r === undefined)) throw err;
    return { params: undefined, missing: notFound(resources[0] as string) };
  }
}
