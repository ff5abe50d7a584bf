import { AUTH, callerId } from "../../../platform/auth.js";
import type { AppDeps } from "../../../platform/deps.js";
import { defineRoute } from "../../../platform/http/route.js";
import { ActionParams } from "../schemas.js";
import {
  CreateExecutionBody,
  ExecutionList,
  ExecutionParams,
  ExecutionRecord,
  ListExecutionsQuery,
  UpdateExecutionBody,
} from "./schemas.js";
import { createExecution, getExecution, listExecutions, updateExecution } from "./service.js";

const tags = ["actions"];

export const executionRoutes = (deps: AppDeps) => [
  defineRoute({
    method: "post",
    path: "/api/sweeps/objects/:object_id/executions",
    summary: "Record an approved handoff of an action to an executor: the approved steps (approved_for_execution must be true)",
    tags,
    auth: AUTH.full,
    role: "editor",
    params: ActionParams,
    body: CreateExecutionBody,
    responses: {
      201: { description: "The execution, status approved", schema: ExecutionRecord },
      403: { description: "The caller's role in the workspace may read but not change actions (forbidden)" },
      404: { description: "Unknown action, or not visible to the caller" },
      409: { description: "The action was dismissed (conflict)" },
    },
    handler: async ({ params, body, auth }) => ({
      status: 201,
      body: await createExecution(deps.db, callerId(auth), params.object_id, body),
    }),
  }),
  defineRoute({
    method: "get",
    path: "/api/sweeps/objects/:object_id/executions",
    summary: "An action's executions, oldest first, with next_offset",
    tags,
    auth: AUTH.full,
    role: "viewer",
    params: ActionParams,
    query: ListExecutionsQuery,
    responses: {
      200: { description: "A page of the action's executions", schema: ExecutionList },
      404: { description: "Unknown action, or not visible to the caller" },
    },
    handler: async ({ params, query, auth }) => ({ body: await listExecutions(deps.db, callerId(auth), params.object_id, query) }),
  }),
  defineRoute({
    method: "get",
    path: "/api/sweeps/executions/:execution_id",
    summary: "One action execution",
    tags,
    auth: AUTH.full,
    role: "viewer",
    params: ExecutionParams,
    responses: {
      200: { description: "The execution", schema: ExecutionRecord },
      404: { description: "Unknown execution, or not visible to the caller" },
    },
    handler: async ({ params, auth }) => ({ body: await getExecution(deps.db, callerId(auth), params.execution_id) }),
  }),
  defineRoute({
    method: "patch",
    path: "/api/sweeps/executions/:execution_id",
    summary: "Move an execution's status forward, report its step results, outcome and metrics, or (an owner or admin) review it",
    tags,
    auth: AUTH.full,
    role: "editor",
    params: ExecutionParams,
    body: UpdateExecutionBody,
    responses: {
      200: { description: "The execution as changed", schema: ExecutionRecord },
      403: { description: "The caller's role may not change actions, or sent review fields without being an owner or admin (forbidden)" },
      404: { description: "Unknown execution, or not visible to the caller" },
      409: {
        description:
          "The change breaks the execution's rules (a final status, a status moving back, a review of an unfinished execution, scopes without an approved review, a reviewed report changed without a review decision), or expected_revision is not current (conflict)",
      },
    },
    handler: async ({ params, body, auth }) => ({ body: await updateExecution(deps.db, callerId(auth), params.execution_id, body) }),
  }),
];
