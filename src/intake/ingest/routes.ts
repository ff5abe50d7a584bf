import { writableEntityForUser } from "../../access/workspaces/access.js";
import { AUTH, callerId } from "../../platform/auth.js";
import type { AppDeps } from "../../platform/deps.js";
import { defineRoute } from "../../platform/http/route.js";
import { IngestRequestBody, IngestResponse } from "./schemas.js";
import { ingestContent } from "./service.js";

export const ingestRoutes = (deps: AppDeps) => [
  defineRoute({
    method: "post",
    path: "/agent/v1/ingest/content",
    summary: "Store sources and their comments atomically (all or nothing); analysis is a separate step",
    tags: ["ingest"],
    auth: AUTH.ingest,
    role: "editor",
    body: IngestRequestBody,
    responses: { 200: { description: "Every original acknowledged, in request order", schema: IngestResponse } },
    handler: async ({ body, auth }) => {
      const { entity_id, ...request } = body;
      const entity = await writableEntityForUser(deps.db, callerId(auth), entity_id, "store sources");
      return { body: await ingestContent(deps, { id: entity.id, workspaceId: entity.workspaceId }, request) };
    },
  }),
];
