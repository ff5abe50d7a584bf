import { z } from "zod";
import { cancelRoute } from "../../jobs/routes.js";
import { AUTH, callerId } from "../../platform/auth.js";
import type { AppDeps } from "../../platform/deps.js";
import { defineRoute } from "../../platform/http/route.js";
import { parseInput } from "../../platform/validation.js";
import { EntityParams, SkillParams } from "../skills/schemas.js";
import { cancelRun } from "./cancel.js";
import { CreateRunBody, CreateRunQuery, RunHeaders, RunList, RunParams, RunRecord } from "./schemas.js";
import { createRun, getRun, listRuns } from "./service.js";

const tags = ["workflow runs"];

export const runRoutes = (deps: AppDeps) => [
  defineRoute({
    method: "post",
    path: "/api/entities/:entity_id/skills/:skill_id/runs",
    summary:
      "Run a skill under an approved quote (scope_hash + max_charge_credits, or none to approve your latest quote), idempotent on Idempotency-Key",
    tags,
    auth: AUTH.full,
    role: "editor",
    params: SkillParams,
    query: CreateRunQuery,
    body: CreateRunBody,
    headers: [{ name: "Idempotency-Key", required: true, description: "8–128 characters; the same key replays the same answer" }],
    responses: {
      202: { description: "Run accepted and queued (or replayed)", schema: RunRecord },
      402: { description: "The workspace's credits cannot cover the approved maximum" },
      409: {
        description:
          "Stale scope, expired quote, the key was used for another request, or (approval_required, with a fresh quote) no approved quote to run under",
      },
    },
    handler: async ({ params, query, body, auth, req }) => {
      const headers = parseInput(RunHeaders, { "idempotency-key": req.get("Idempotency-Key") }, "header");
      const result = await createRun(
        deps,
        callerId(auth),
        { entityId: params.entity_id, skillId: params.skill_id, idempotencyKey: headers["idempotency-key"] },
        body,
        query,
      );
      return {
        status: result.status,
        body: result.body,
        headers: result.replayed ? { "Idempotent-Replayed": "true" } : ({} as Record<string, string>),
      };
    },
  }),
  defineRoute({
    method: "get",
    path: "/api/entities/:entity_id/skills/:skill_id/runs/:run_id",
    summary: "A workflow run: status, charges, analysis id",
    tags,
    auth: AUTH.full,
    role: "viewer",
    params: RunParams,
    responses: { 200: { description: "Run", schema: RunRecord } },
    handler: async ({ params, auth }) => ({
      body: await getRun(deps.db, callerId(auth), { entityId: params.entity_id, skillId: params.skill_id, runId: params.run_id }),
    }),
  }),
  cancelRoute({
    path: "/api/entities/:entity_id/skills/:skill_id/runs/:run_id/cancel",
    summary: "Cancel a workflow run: charged only for the work done, the rest of its reservation released",
    tags,
    auth: AUTH.full,
    params: RunParams,
    schema: RunRecord,
    what: "The run",
    cancel: (params, auth) =>
      cancelRun(deps, callerId(auth), { entityId: params.entity_id, skillId: params.skill_id, runId: params.run_id }),
  }),
  defineRoute({
    method: "get",
    path: "/api/entities/:entity_id/skill-runs",
    summary: "List an entity's workflow runs, newest first",
    tags,
    auth: AUTH.full,
    role: "viewer",
    params: EntityParams,
    query: z.object({}),
    responses: { 200: { description: "Runs", schema: RunList } },
    handler: async ({ params, auth }) => ({ body: await listRuns(deps.db, callerId(auth), params.entity_id) }),
  }),
];
