import { AUTH, callerId } from "../../platform/auth.js";
import type { AppDeps } from "../../platform/deps.js";
import { defineRoute } from "../../platform/http/route.js";
import { executionRoutes } from "./executions/routes.js";
import { ActionList, ActionParams, ActionRecord, CreateActionBody, ListActionsQuery, UpdateActionBody } from "./schemas.js";
import { createAction, getAction, listActions, updateAction } from "./service.js";

const tags = ["actions"];
const forbidden = { description: "The caller's role in the workspace may read but not change actions (forbidden)" };

export const actionRoutes = (deps: AppDeps) => [
  defineRoute({
    method: "get",
    path: "/api/sweeps/objects",
    summary: "An entity's actions (saved follow-up plans derived from findings), with their evidence; open and acting by default",
    tags,
    auth: AUTH.full,
    role: "viewer",
    query: ListActionsQuery,
    responses: {
      200: { description: "A page of actions, oldest first, with next_offset", schema: ActionList },
      404: { description: "The entity does not exist or is not visible to the caller" },
    },
    handler: async ({ query, auth }) => ({ body: await listActions(deps.db, callerId(auth), query) }),
  }),
  defineRoute({
    method: "post",
    path: "/api/sweeps/objects",
    summary: "Save an action derived from a revision of one of the entity's findings (a saved plan, not an approved decision)",
    tags,
    auth: AUTH.full,
    role: "editor",
    body: CreateActionBody,
    responses: {
      201: { description: "The action", schema: ActionRecord },
      200: { description: "The same action already existed for this finding revision and type (a retried create)", schema: ActionRecord },
      403: forbidden,
      404: { description: "The entity, the finding or its revision does not exist or is not visible to the caller" },
      409: { description: "An action of this type exists for the finding revision with other settings (conflict, with `action`)" },
    },
    handler: async ({ body, auth }) => {
      const answer = await createAction(deps.db, callerId(auth), body);
      return { status: answer.status, body: answer.body };
    },
  }),
  defineRoute({
    method: "get",
    path: "/api/sweeps/objects/:object_id",
    summary: "One action",
    tags,
    auth: AUTH.full,
    role: "viewer",
    params: ActionParams,
    responses: {
      200: { description: "The action", schema: ActionRecord },
      404: { description: "Unknown action, or not visible to the caller" },
    },
    handler: async ({ params, auth }) => ({ body: await getAction(deps.db, callerId(auth), params.object_id) }),
  }),
  defineRoute({
    method: "patch",
    path: "/api/sweeps/objects/:object_id",
    summary: "Change an action's status, urgency, title, summary or plan",
    tags,
    auth: AUTH.full,
    role: "editor",
    params: ActionParams,
    body: UpdateActionBody,
    responses: {
      200: { description: "The action as changed", schema: ActionRecord },
      403: forbidden,
      404: { description: "Unknown action, or not visible to the caller" },
      409: { description: "expected_revision is not the action's current revision (conflict, with current_revision)" },
    },
    handler: async ({ params, body, auth }) => ({ body: await updateAction(deps.db, callerId(auth), params.object_id, body) }),
  }),
  ...executionRoutes(deps),
];
