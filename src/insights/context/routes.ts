import { AUTH, callerId } from "../../platform/auth.js";
import type { AppDeps } from "../../platform/deps.js";
import { defineRoute } from "../../platform/http/route.js";
import { embedderFor } from "../embed/provider.js";
import { RecallQuery, RecallResponse, SaveBody, SavedPage } from "./schemas.js";
import { type ContextServices, recallPages, savePage } from "./service.js";
import { CommonTerms } from "./terms.js";
import { CachedMatrixRanker } from "./vectors.js";

const tags = ["context"];

export const contextRoutes = (deps: AppDeps) => {
  const svc: ContextServices = {
    db: deps.db,
    queues: deps.queues,
    logger: deps.logger,
    embedder: embedderFor(deps.config),
    ranker: new CachedMatrixRanker(deps.db, deps.config.CONTEXT_VECTOR_CACHE_MB * 1024 * 1024),
    terms: new CommonTerms(deps.db),
    minSimilarity: deps.config.CONTEXT_MIN_SIMILARITY,
  };
  return [
    defineRoute({
      method: "post",
      path: "/agent/v1/context/save",
      summary: "Create or replace a page at a stable path of the signed-in user",
      tags,
      auth: AUTH.bearerOnly,
      role: "account",
      body: SaveBody,
      responses: {
        200: { description: "The stored page; `created` tells creation from replacement", schema: SavedPage },
        404: { description: "project_id names no project the caller can see" },
      },
      handler: async ({ body, auth }) => ({ body: await savePage(svc, callerId(auth), body) }),
    }),
    defineRoute({
      method: "get",
      path: "/agent/v1/context/recall",
      summary: "Find the signed-in user's pages: keyword and vector rankings fused",
      tags,
      auth: AUTH.bearerOnly,
      role: "account",
      query: RecallQuery,
      responses: {
        200: { description: "Best matches first", schema: RecallResponse },
        404: { description: "project_id names no project the caller can see" },
      },
      handler: async ({ query, auth }) => ({ body: await recallPages(svc, callerId(auth), query) }),
    }),
  ];
};
