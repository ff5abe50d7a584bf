import { AUTH, callerId } from "../../platform/auth.js";
import type { AppDeps } from "../../platform/deps.js";
import { defineRoute } from "../../platform/http/route.js";
import { SubmitObservationsBody, SubmitObservationsResponse } from "./schemas.js";
import { submitObservations } from "./service.js";

export const observationRoutes = (deps: AppDeps) => [
  defineRoute({
    method: "post",
    path: "/api/observations/submit",
    summary: "Save 1–50 feedback observations as originals of entities in a project's workspace; an identical retry answers the same ids",
    tags: ["ingest"],
    auth: AUTH.ingest,
    role: "editor",
    body: SubmitObservationsBody,
    responses: {
      200: {
        description: "The saved ids, in request order, with what was created and the processing status",
        schema: SubmitObservationsResponse,
      },
      404: { description: "The project or an entity does not exist or is not visible to the caller" },
    },
    handler: async ({ body, auth }) => ({ body: await submitObservations(deps, callerId(auth), body) }),
  }),
];
