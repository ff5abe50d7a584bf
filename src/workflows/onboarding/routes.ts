import { AUTH, callerId } from "../../platform/auth.js";
import type { AppDeps } from "../../platform/deps.js";
import { defineRoute } from "../../platform/http/route.js";
import { OnboardingBody, OnboardingResponse } from "./schemas.js";
import { onboard } from "./service.js";

export const onboardingRoutes = (deps: AppDeps) => [
  defineRoute({
    method: "post",
    path: "/api/entities/onboarding",
    summary: "Create the onboarding workspace (workspace, project, entities, research objectives) in one transaction",
    tags: ["onboarding"],
    auth: AUTH.full,
    role: "editor",
    body: OnboardingBody,
    responses: {
      201: { description: "Created (a retry with the same request_id and body replays the same answer)", schema: OnboardingResponse },
      404: { description: "workspace_id is not a workspace the caller is a member of" },
      409: { description: "request_id already used for a different request (idempotency_conflict)" },
    },
    handler: async ({ body, auth }) => {
      const result = await onboard(deps.db, callerId(auth), body);
      return { status: 201, body: result.body, headers: { "Idempotent-Replayed": String(result.replayed) } };
    },
  }),
];
