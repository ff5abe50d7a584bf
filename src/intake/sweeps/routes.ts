import { cancelRoute } from "../../jobs/routes.js";
import { AUTH, callerId } from "../../platform/auth.js";
import type { AppDeps } from "../../platform/deps.js";
import { defineRoute } from "../../platform/http/route.js";
import { cancelSweep, startSweep, sweepRun } from "./run.js";
import { RunSweepBody, SweepRunParams, SweepRunRecord } from "./schemas.js";

const tags = ["evidence"];

export const sweepRunRoutes = (deps: AppDeps) => [
  defineRoute({
    method: "post",
    path: "/api/sweeps/run",
    summary: "Evidence capture: enrich an entity's newly stored originals (embeddings, opinion units); idempotent on the key",
    tags,
    auth: AUTH.ingest,
    role: "editor",
    body: RunSweepBody,
    responses: {
      200: { description: "The run, finished (completed or failed), with its statistics", schema: SweepRunRecord },
      202: { description: "The run, still queued or running: poll `next`", schema: SweepRunRecord },
      404: { description: "The entity does not exist or is not visible to the caller" },
      409: { description: "The idempotency_key was used for another entity (idempotency_conflict)" },
      503: { description: "The job queue is unavailable; nothing was created" },
    },
    handler: async ({ body, auth }) => {
      const answer = await startSweep(deps, callerId(auth), body);
      return answer.finished
        ? { status: 200, body: answer.body }
        : { status: 202, body: answer.body, headers: { Location: answer.body.next, "Retry-After": "1" } };
    },
  }),
  defineRoute({
    method: "get",
    path: "/api/sweeps/runs/:sweep_run_id",
    summary: "One evidence capture run of the workspace (whoever started it): status and statistics",
    tags,
    auth: AUTH.ingest,
    role: "viewer",
    params: SweepRunParams,
    responses: {
      200: { description: "The run", schema: SweepRunRecord },
      404: { description: "Unknown run, or its entity is not in a workspace of the caller" },
    },
    handler: async ({ params, auth }) => ({ body: await sweepRun(deps, callerId(auth), params.sweep_run_id) }),
  }),
  cancelRoute({
    path: "/api/sweeps/runs/:sweep_run_id/cancel",
    summary: "Cancel an evidence capture run; what it enriched before the cancel stays",
    tags,
    auth: AUTH.ingest,
    params: SweepRunParams,
    schema: SweepRunRecord,
    what: "The evidence capture run",
    cancel: (params, auth) => cancelSweep(deps, callerId(auth), params.sweep_run_id),
  }),
];
