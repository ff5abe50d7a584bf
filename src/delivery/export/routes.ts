import { AUTH, callerId } from "../../platform/auth.js";
import type { AppDeps } from "../../platform/deps.js";
import { defineRoute } from "../../platform/http/route.js";
import { completeness } from "./completeness.js";
import { CompletenessQuery, CompletenessResponse, ExportTableParams, ExportTableQuery, ExportTableResponse } from "./schemas.js";
import { exportTable } from "./service.js";

const tags = ["export"];

export const exportRoutes = (deps: AppDeps) => [
  defineRoute({
    method: "get",
    path: "/agent/v1/export/completeness",
    summary: "Audit text, URL, enrichment and coverage per platform before treating a corpus as comprehensive",
    tags,
    auth: AUTH.exportAudit,
    role: "viewer",
    query: CompletenessQuery,
    responses: { 200: { description: "The audit", schema: CompletenessResponse } },
    handler: async ({ query, auth }) => ({ body: await completeness(await deps.reads.forCaller(auth), callerId(auth), query) }),
  }),
  defineRoute({
    method: "get",
    path: "/agent/v1/export/table/:table_name",
    summary: "Page through one raw table in (created_at, id) order, limited to what the caller may see",
    tags,
    auth: AUTH.exportTable,
    role: "viewer",
    params: ExportTableParams,
    query: ExportTableQuery,
    responses: { 200: { description: "One page of full-fidelity rows", schema: ExportTableResponse } },
    handler: async ({ params, query, auth }) => ({
      body: await exportTable(await deps.reads.forCaller(auth), callerId(auth), {
        table: params.table_name,
        entityId: query.entity_id,
        limit: query.limit,
        offset: query.offset,
        cursor: query.cursor,
      }),
    }),
  }),
];
