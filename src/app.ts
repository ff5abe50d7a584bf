import "./job-kinds.js";
import { randomUUID } from "node:crypto";
import express, { type Express, type NextFunction, type Request, type Response } from "express";
import swaggerUi from "swagger-ui-express";
import { acceptInvitations } from "./access/workspaces/members.js";
import { mcpRouter } from "./delivery/mcp/http.js";
import { sharePages } from "./delivery/share/router.js";
import { registerCollectionMetrics } from "./intake/collection/metrics.js";
import { registerIngestMetrics } from "./intake/ingest/writers.js";
import { Authenticator, readCredential } from "./platform/auth.js";
import type { AppDeps } from "./platform/deps.js";
import { AppError } from "./platform/errors.js";
import { operatorAuth, queueBoard } from "./platform/http/admin.js";
import { errorHandler } from "./platform/http/errors.js";
import { buildOpenApi } from "./platform/http/openapi.js";
import { allowedMethods, mountRoutes } from "./platform/http/route.js";
import { docsSecurityHeaders, securityHeaders } from "./platform/http/security.js";
import { createMetrics } from "./platform/metrics.js";
import { createRateLimiter } from "./platform/rate-limit.js";
import { allRoutes } from "./routes.js";
import { registerRoutineMetrics } from "./workflows/routines/metrics.js";

const BODY_METHODS = new Set(["POST", "PUT", "PATCH", "DELETE"]);

/** Builds the web application around the given dependencies (tests pass their own). */
export function createApp(deps: AppDeps): Express {
  const app = express();
  const { config, logger } = deps;
  // A user signing in with a verified email joins the workspaces that invited it.
  const authenticator = new Authenticator(deps.db, config, (userId, email) => acceptInvitations(deps.db, userId, email));
  const rateLimiter = createRateLimiter(deps.redis, config.REDIS_PREFIX, config.RATE_LIMIT_PER_MINUTE, logger);
  const metrics = createMetrics(deps.queues, deps.reads);
  registerCollectionMetrics(metrics.registry, deps.db);
  registerIngestMetrics(metrics.registry, deps.db, deps.config.INGEST_WRITERS);
  registerRoutineMetrics(metrics.registry, deps.db);
  const routes = allRoutes(deps);
  // Built on its first request: the document is large, and most processes are never asked for it.
  let openapi: ReturnType<typeof buildOpenApi> | undefined;
  const openapiDocument = () =>
    (openapi ??= buildOpenApi(routes, { version: "1.0.0", ...(config.PUBLIC_BASE_URL ? { serverUrl: config.PUBLIC_BASE_URL } : {}) }));

  app.disable("x-powered-by");
  app.set("trust proxy", config.TRUST_PROXY);
  app.set("query parser", "simple");

  // Request id and one structured log line per request.
  app.use((req: Request, res: Response, next: NextFunction) => {
    const incoming = req.headers["x-request-id"];
    const requestId = typeof incoming === "string" && /^[A-Za-z0-9._-]{1,128}$/.test(incoming) ? incoming : randomUUID();
    res.locals.requestId = requestId;
    res.set("X-Request-Id", requestId);
    const started = process.hrtime.bigint();
    res.on("finish", () => {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const route = (res.locals.routeTemplate as string | undefined) ?? "unmatched";
      metrics.httpDuration.observe({ method: req.method, route, status: String(res.statusCode) }, seconds);
      if (res.statusCode >= 500) metrics.httpErrors.inc({ route, status: String(res.statusCode) });
      logger.info(
        { requestId, method: req.method, route, path: req.path, status: res.statusCode, ms: Math.round(seconds * 1000) },
        "request",
      );
    });
    next();
  });

  // The explorer page loads the document from /openapi.json rather than embedding a copy of it.
  app.use("/docs", docsSecurityHeaders(config), swaggerUi.serve, swaggerUi.setup(undefined, { swaggerOptions: { url: "/openapi.json" } }));
  app.use(securityHeaders(config));

  app.get("/openapi.json", (_req, res) => {
    res.json(openapiDocument());
  });
  app.get("/metrics", operatorAuth(config), async (_req, res) => {
    res.set("Content-Type", metrics.registry.contentType);
    res.send(await metrics.registry.metrics());
  });
  app.use("/admin/queues", operatorAuth(config), queueBoard(deps.queues, "/admin/queues"));
  // Read-only pages opened by share links (HTML, with their own CSP), and their assets.
  app.use(sharePages(deps));

  // Bodies: JSON only, bounded in size.
  app.use((req: Request, _res: Response, next: NextFunction) => {
    const hasBody = Number(req.headers["content-length"] ?? 0) > 0 || req.headers["transfer-encoding"] !== undefined;
    if (BODY_METHODS.has(req.method) && hasBody && !req.is("application/json") && !req.is("application/*+json")) {
      next(new AppError("unsupported_media_type", "Send the request body as JSON with 'Content-Type: application/json'."));
      return;
    }
    next();
  });
  // Any JSON value parses (not only objects and lists), so a body of `null` or `"x"` is
  // refused by the route's schema ("should be a JSON object"), not as malformed JSON.
  app.use(express.json({ limit: config.BODY_LIMIT, strict: false, type: ["application/json", "application/*+json"] }));

  // The hosted MCP endpoint: its tools call the routes below without HTTP, under the same rules.
  app.use(mcpRouter({ deps, authenticator, rateLimit: (auth) => rateLimiter(auth), routes, registry: metrics.registry }));

  const router = express.Router();
  mountRoutes(router, routes, {
    authenticator,
    readCredential: (req) => readCredential(req.headers as { authorization?: string; "x-api-key"?: string }),
    rateLimit: (_req, auth) => rateLimiter(auth),
    noteWrite: (auth) => deps.reads.noteWrite(auth),
  });
  app.use(router);

  app.use((req: Request, res: Response, next: NextFunction) => {
    const allow = allowedMethods(res);
    if (allow) {
      next(
        new AppError("method_not_allowed", `${req.method} is not allowed on ${req.path}; allowed: ${allow}.`, {
          headers: { Allow: allow },
        }),
      );
      return;
    }
    next(new AppError("route_not_found", `No route matches ${req.method} ${req.path}.`));
  });
  app.use(errorHandler(logger, authenticator));
  return app;
}
