import { cancelRoute } from "../../jobs/routes.js";
import { AUTH, callerId } from "../../platform/auth.js";
import type { AppDeps } from "../../platform/deps.js";
import { defineRoute } from "../../platform/http/route.js";
import { SyncAnswered, SyncBody, SyncPending, SyncStatus, SyncStatusParams } from "./schemas.js";
import { cancelSync, startSync, syncStatus } from "./service.js";

const tags = ["meetingnotes"];

export const notesRoutes = (deps: AppDeps) => [
  defineRoute({
    method: "post",
    path: "/api/meetingnotes/sync",
    summary: "Import one bounded page of meeting notes (transcripts become quotable originals; summaries become knowledge)",
    tags,
    auth: AUTH.ingest,
    role: "editor",
    body: SyncBody,
    responses: {
      200: { description: "The imported page", schema: SyncAnswered },
      202: { description: "Still importing: poll `next`", schema: SyncPending },
      404: { description: "entity_id is not an entity the caller can see" },
      409: { description: "request_id already used for a different import (idempotency_conflict), or its import was cancelled (conflict)" },
      502: { description: "The notes provider refused the api_key (provider_unauthorized) or answered badly (upstream_error)" },
      503: { description: "The notes provider is unavailable (upstream_unavailable), or SECRETS_KEY is not configured" },
    },
    handler: async ({ body, auth }) => {
      const answer = await startSync(deps, callerId(auth), body);
      return answer.status === 202
        ? { status: 202, body: answer.body, headers: { Location: answer.body.next, "Retry-After": "1" } }
        : { status: 200, body: answer.body };
    },
  }),
  defineRoute({
    method: "get",
    path: "/api/meetingnotes/sync/:request_id",
    summary: "State of a meeting-note import: the imported page, the failure, or still running",
    tags,
    auth: AUTH.ingest,
    role: "viewer",
    params: SyncStatusParams,
    responses: { 200: { description: "The sync's state", schema: SyncStatus } },
    handler: async ({ params, auth }) => ({ body: await syncStatus(deps, callerId(auth), params.request_id) }),
  }),
  cancelRoute({
    path: "/api/meetingnotes/sync/:request_id/cancel",
    summary: "Cancel a meeting-note import",
    tags,
    auth: AUTH.ingest,
    params: SyncStatusParams,
    schema: SyncStatus,
    what: "The sync",
    cancel: (params, auth) => cancelSync(deps, callerId(auth), params.request_id),
  }),
];
