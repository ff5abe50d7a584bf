import { AUTH, callerId } from "../../platform/auth.js";
import type { AppDeps } from "../../platform/deps.js";
import { defineRoute } from "../../platform/http/route.js";
import { IntelligenceSummary, SummaryQuery } from "./schemas.js";
import { intelligenceSummary } from "./service.js";

export const intelligenceRoutes = (deps: AppDeps) => [
  defineRoute({
    method: "get",
    path: "/agent/v1/intelligence/summary",
    summary:
      "An entity's readout over a window and the one before it: originals and coverage per platform, themes with polarity and verbatim quotes, changes, competitor gaps; computed from stored opinion units",
    tags: ["intelligence"],
    auth: AUTH.ingest,
    role: "viewer",
    query: SummaryQuery,
    responses: {
      200: { description: "The summary; every count is of originals, not people", schema: IntelligenceSummary },
      404: { description: "The entity does not exist or is not visible to the caller" },
    },
    handler: async ({ query, auth }) => ({ body: await intelligenceSummary(await deps.reads.forCaller(auth), callerId(auth), query) }),
  }),
];
