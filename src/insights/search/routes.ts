import { AUTH, callerId } from "../../platform/auth.js";
import type { AppDeps } from "../../platform/deps.js";
import { defineRoute } from "../../platform/http/route.js";
import { SearchBody, SearchResponse } from "./schemas.js";
import { searchEvidence, searchProviders } from "./service.js";

export const searchRoutes = (deps: AppDeps) => {
  const providers = searchProviders(deps.db, deps.config);
  return [
    defineRoute({
      method: "post",
      path: "/agent/v1/search",
      summary: "Search stored public evidence (and configured external providers) without synthesis",
      tags: ["search"],
      auth: AUTH.bearerOnly,
      role: "account",
      // POST for its body; it writes nothing, so it may read from a replica.
      readOnly: true,
      body: SearchBody,
      responses: {
        200: { description: "Ranked results", schema: SearchResponse },
        502: { description: "A search provider answered badly" },
        503: { description: "A search provider could not be reached or timed out" },
      },
      handler: async ({ body, auth }) => ({
        body: await searchEvidence(providers, callerId(auth), body, await deps.reads.forCaller(auth)),
      }),
    }),
  ];
};
