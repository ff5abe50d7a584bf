import { z } from "zod";
import { callerId } from "../../platform/auth.js";
import type { AppDeps } from "../../platform/deps.js";
import { defineRoute } from "../../platform/http/route.js";
import { optional } from "../../platform/validation.js";
import { describeConnection } from "./service.js";

const ConnectionQuery = z.object({
  entity_id: optional(z.string().min(1).max(100)),
  project_id: optional(z.string().min(1).max(100)),
});

const ConnectionResponse = z.object({
  contract_version: z.literal(1),
  status: z.enum(["connected", "scope_required"]),
  user_id: z.string(),
  credential: z.enum(["bearer", "key"]),
  scopes: z.array(z.string()),
  raw_export_enabled: z.boolean(),
  entity_id: z.string().nullable().optional(),
  project_id: z.string().nullable().optional(),
  workspace_id: z.string().nullable().optional(),
  accepts: z.array(z.string()).optional(),
});

export const connectionRoutes = (deps: AppDeps) => [
  defineRoute({
    method: "get",
    path: "/agent/v1/connection",
    summary: "Who the caller is and which scope it acts in (scope_required when an entity or project must be named)",
    tags: ["connection"],
    auth: { bearer: true, keys: ["ingest", "export", "*"], userFlags: true },
    role: "account",
    query: ConnectionQuery,
    responses: { 200: { description: "Connection", schema: ConnectionResponse } },
    handler: async ({ query, auth }) => {
      callerId(auth);
      return { body: await describeConnection(deps.db, auth!, query) };
    },
  }),
];
