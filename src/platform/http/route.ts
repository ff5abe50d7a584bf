import type { Request, Response, Router } from "express";
import type { z } from "zod";
import type { AuthContext, AuthRule } from "../auth.js";
import { parseInput } from "../validation.js";
import type { HttpServices } from "./context.js";
import { ensureRetryAfter } from "./retry-after.js";

/**
 * Routes are data: method, path, credential rule, zod schemas and a handler. `mount`
 * wires them into Express (authenticate → validate → handle → send) and the same
 * table feeds the OpenAPI document, so the description never drifts from the checks.
 */
export type Method = "get" | "post" | "put" | "patch" | "delete";

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
  tags: string[];
  auth: AuthRule;
  body?: B;
  query?: Q;
  params?: P;
  /** Extra request headers worth documenting (e.g. Idempotency-Key). */
  headers?: { name: string; required: boolean; description: string }[];
  responses: Record<number, ResponseSpec>;
  /** Return a result to send it as JSON; return nothing when the handler wrote the response itself. */
  handler: (input: HandlerInput<z.output<B>, z.output<Q>, z.output<P>>) => Promise<HandlerResult | undefined>;
}

// biome-ignore lint/suspicious/noExplicitAny: the table holds routes of every schema type
export type AnyRoute = RouteSpec<any, any, any>;

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

      const params = route.params ? parseInput(route.params, req.params, "path") : req.params;
      const query = route.query ? parseInput(route.query, req.query ?? {}, "query") : req.query;
      const body = route.body ? parseInput(route.body, req.body, "body") : undefined;

      const result = await route.handler({ body, query, params, auth, req, res });
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
}
