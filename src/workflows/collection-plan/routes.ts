import { AUTH, callerId } from "../../platform/auth.js";
import type { AppDeps } from "../../platform/deps.js";
import { defineRoute } from "../../platform/http/route.js";
import { CollectionPlan, CollectionPlanQuery } from "./schemas.js";
import { collectionPlan } from "./service.js";

export const collectionPlanRoutes = (deps: AppDeps) => [
  defineRoute({
    method: "get",
    path: "/agent/v1/ingest/collection-plan",
    summary:
      "An entity's saved collection scope and one task per platform and target (query, window, last coverage, cursor to resume from); starts nothing",
    tags: ["ingest"],
    auth: AUTH.ingest,
    role: "viewer",
    query: CollectionPlanQuery,
    responses: {
      200: { description: "The plan", schema: CollectionPlan },
      404: { description: "The entity does not exist or is not visible to the caller" },
    },
    handler: async ({ query, auth }) => ({ body: await collectionPlan(deps, callerId(auth), query.entity_id) }),
  }),
];
