import { cancelRoute } from "../../jobs/routes.js";
import { AUTH, callerId } from "../../platform/auth.js";
import type { AppDeps } from "../../platform/deps.js";
import { ValidationFailed } from "../../platform/errors.js";
import { defineRoute } from "../../platform/http/route.js";
import { cancelCollectionJob } from "./cancel.js";
import { CreateJobBody, CreateJobResponse, JobIdParams, JobStatusResponse } from "./schemas.js";
import { commandFromBody, createCollectionJob, type JobRoute } from "./service.js";
import { collectionJobStatus } from "./status.js";

const tags = ["collection"];

const unavailable = { description: "The job queue is unavailable; nothing was created" };

function createRoute(deps: AppDeps, route: JobRoute, path: string, summary: string) {
  return defineRoute({
    method: "post",
    path,
    summary,
    tags,
    auth: AUTH.ingest,
    role: "editor",
    body: CreateJobBody,
    responses: {
      200: { description: "The job (a replay of the same request answers the same job)", schema: CreateJobResponse },
      404: { description: "The entity does not exist or is not visible to the caller" },
      409: { description: "The idempotency_key was used for a different request" },
      503: unavailable,
    },
    handler: async ({ body, auth, req }) => {
      if (route === "research" && (req.body as { collection_only?: unknown } | undefined)?.collection_only === true) {
        throw new ValidationFailed([
          {
            loc: ["body", "collection_only"],
            msg: "The research route always continues into synthesis; use POST /agent/v1/ingest/collection/jobs for collection_only jobs",
            type: "literal_error",
          },
        ]);
      }
      return { body: await createCollectionJob(deps, callerId(auth), commandFromBody(body, route)) };
    },
  });
}

function statusRoute(deps: AppDeps, path: string, summary: string) {
  return defineRoute({
    method: "get",
    path,
    summary,
    tags,
    auth: AUTH.ingest,
    role: "viewer",
    params: JobIdParams,
    responses: {
      200: { description: "The job's status, progress, counts and coverage per platform", schema: JobStatusResponse },
      404: { description: "Unknown job, or not visible to the caller" },
    },
    handler: async ({ params, auth }) => ({ body: await collectionJobStatus(deps, callerId(auth), params.job_id) }),
  });
}

const cancelJobRoute = (deps: AppDeps, path: string, summary: string) =>
  cancelRoute({
    path,
    summary,
    tags,
    auth: AUTH.ingest,
    params: JobIdParams,
    schema: JobStatusResponse,
    what: "The job",
    cancel: (params, auth) => cancelCollectionJob(deps, callerId(auth), params.job_id),
  });

export const collectionRoutes = (deps: AppDeps) => [
  createRoute(deps, "collection", "/agent/v1/ingest/collection/jobs", "Create a collection job (collection_only stops before synthesis)"),
  statusRoute(deps, "/agent/v1/ingest/collection/jobs/:job_id", "Poll a collection job"),
  cancelJobRoute(deps, "/agent/v1/ingest/collection/jobs/:job_id/cancel", "Cancel a collection job"),
  createRoute(deps, "research", "/agent/v1/ingest/research/jobs", "Create a research job (older route: always continues into synthesis)"),
  statusRoute(deps, "/agent/v1/ingest/research/jobs/:job_id", "Poll a research job"),
  cancelJobRoute(deps, "/agent/v1/ingest/research/jobs/:job_id/cancel", "Cancel a research job"),
];
