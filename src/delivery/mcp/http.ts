import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import express, { type NextFunction, type Request, type Response, type Router } from "express";
import type { Registry } from "prom-client";
import { API_KEY_SCOPES, type AuthContext, type AuthRule, readCredential } from "../../platform/auth.js";
import { AppError } from "../../platform/errors.js";
import type { AnyRoute } from "../../platform/http/route.js";
import type { ToolServices } from "./invoke.js";
import { registerToolMetrics } from "./metrics.js";
import { createMcpServer, listTools } from "./server.js";

export const MCP_PATH = "/mcp";

/**
 * Who may open an MCP request at all: any valid credential (a user bearer, or an API key of
 * any scope). Each tool call is then held to its own route's rule, so a key without the
 * scope a mode needs is refused inside MCP, as that route would refuse it.
 */
export const MCP_AUTH: AuthRule = { bearer: true, keys: API_KEY_SCOPES };

/**
 * The hosted MCP endpoint (Streamable HTTP, stateless). `POST /mcp` authenticates the
 * credential before any MCP message is read (401 with `WWW-Authenticate` otherwise, in the
 * API's error shape), then answers with a new server and transport for this request alone,
 * so any web process answers any call. GET (the optional server-to-client stream) and
 * DELETE (session end) have nothing to serve without sessions: 405 with `Allow: POST`.
 */
export function mcpRouter(
  services: Omit<ToolServices, "routes" | "metrics"> & { routes: readonly AnyRoute[]; registry: Registry },
): Router {
  const routes = new Map(services.routes.map((route) => [`${route.method.toUpperCase()} ${route.path}`, route]));
  const tools: ToolServices = {
    deps: services.deps,
    authenticator: services.authenticator,
    rateLimit: services.rateLimit,
    routes,
    metrics: registerToolMetrics(services.registry),
  };
  const toolList = listTools(tools);
  const router = express.Router();

  router.post(MCP_PATH, async (req: Request, res: Response) => {
    res.locals.routeTemplate = MCP_PATH;
    const credential = readCredential(req.headers as { authorization?: string; "x-api-key"?: string });
    await services.authenticator.authenticate(credential, MCP_AUTH, (ctx: AuthContext) => {
      res.locals.keyAuth = ctx;
    });
    res.set("Cache-Control", "no-store");

    const server = createMcpServer({ services: tools, credential, requestId: res.locals.requestId as string, tools: toolList });
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      keepAliveMs: services.deps.config.SSE_HEARTBEAT_MS,
    });
    res.on("close", () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, req.body);
  });

  router.all(MCP_PATH, (req: Request, res: Response, next: NextFunction) => {
    res.locals.routeTemplate = MCP_PATH;
    next(
      new AppError(
        "method_not_allowed",
        `${req.method} is not allowed on ${MCP_PATH}: this MCP endpoint is stateless and answers POST only.`,
        {
          headers: { Allow: "POST" },
        },
      ),
    );
  });
  return router;
}
