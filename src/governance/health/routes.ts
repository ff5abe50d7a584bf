import { z } from "zod";
import { AUTH } from "../../platform/auth.js";
import type { AppDeps } from "../../platform/deps.js";
import { defineRoute } from "../../platform/http/route.js";
import { checkHealth } from "./service.js";

const Dependency = z.object({ status: z.enum(["ok", "unavailable"]), latency_ms: z.number().nullable(), error: z.string().optional() });
const HealthResponse = z.object({
  status: z.enum(["ok", "degraded"]),
  version: z.string(),
  time: z.string(),
  dependencies: z.object({ postgres: Dependency, redis: Dependency }),
});

export const healthRoutes = (deps: AppDeps) => [
  defineRoute({
    method: "get",
    path: "/agent/v1/health",
    summary: "Service health: version and the state of PostgreSQL and Redis",
    tags: ["health"],
    auth: AUTH.public,
    role: "public",
    responses: {
      200: { description: "Every dependency answers", schema: HealthResponse },
      503: { description: "A dependency is unavailable", schema: HealthResponse },
    },
    handler: async () => {
      const health = await checkHealth(deps);
      return { status: health.status === "ok" ? 200 : 503, body: health, headers: { "Cache-Control": "no-store" } };
    },
  }),
];
