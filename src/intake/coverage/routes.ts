import { writableEntityForUser } from "../../access/workspaces/access.js";
import { AUTH, callerId } from "../../platform/auth.js";
import type { AppDeps } from "../../platform/deps.js";
import { defineRoute } from "../../platform/http/route.js";
import { CoverageRequestBody, CoverageResponse } from "./schemas.js";
import { recordCoverage } from "./service.js";

export const coverageRoutes = (deps: AppDeps) => [
  defineRoute({
    method: "post",
    path: "/agent/v1/ingest/coverage",
    summary: "Record what a collector attempted and whether it proved coverage (idempotent per entity, run and collector)",
    tags: ["ingest"],
    auth: AUTH.ingest,
    role: "editor",
    body: CoverageRequestBody,
    responses: { 200: { description: "The record as stored", schema: CoverageResponse } },
    handler: async ({ body, auth }) => {
      const { entity_id, ...input } = body;
      const entity = await writableEntityForUser(deps.db, callerId(auth), entity_id, "record coverage");
      return { body: await recordCoverage(deps.db, { id: entity.id }, input) };
    },
  }),
];
