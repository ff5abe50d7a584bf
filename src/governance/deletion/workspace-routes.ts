import { z } from "zod";
import { AUTH, callerId } from "../../platform/auth.js";
import type { AppDeps } from "../../platform/deps.js";
import { defineRoute } from "../../platform/http/route.js";
import { optional, queryInt } from "../../platform/validation.js";
import { listErasures, readErasure, requestErasure } from "./erasures.js";
import { readRetention, updateWorkspaceSettings } from "./retention.js";
import {
  ErasureBody,
  ErasureList,
  ErasureParams,
  ErasureRecord,
  RetentionReport,
  WorkspaceParams,
  WorkspaceSettingsBody,
  WorkspaceState,
} from "./schemas.js";
import { deleteWorkspace, restoreWorkspace } from "./workspaces.js";

/** The workspace-wide routes of deletion: author erasures, deleting and restoring a workspace, retention. */
const tags = ["deletion"];
const erasures = "/api/workspaces/:workspace_id/erasures";
const ListQuery = z.object({ limit: optional(queryInt(1, 500)) });
const workspace = "/api/workspaces/:workspace_id";

export const workspaceDeletionRoutes = (deps: AppDeps) => [
  defineRoute({
    method: "post",
    path: erasures,
    summary: "Forget an author on a platform: delete their originals and skip their future items",
    description:
      "Keeps only an HMAC of the handle. Every original by the author on the platform in the workspace (any spelling " +
      "that trims and lower-cases to the same handle) is deleted as `DELETE /agent/v1/content/{content_id}` deletes one; " +
      "from now on ingests, collectors, note imports and observations skip the author's items (`skipped_erased`). " +
      "Up to ERASURE_SYNC_LIMIT originals (default 500) are deleted before the answer (200); more by a job (202, poll " +
      "`next`). Asking again for the same author answers the same erasure, resumed if it had stopped.",
    tags,
    auth: AUTH.full,
    role: "admin",
    params: WorkspaceParams,
    body: ErasureBody,
    responses: {
      200: { description: "The erasure, completed (or failed)", schema: ErasureRecord },
      202: { description: "The erasure, still running: poll `next`", schema: ErasureRecord },
      503: { description: "SECRETS_KEY is not configured, or the job queue is unavailable (the erasure is recorded; post again)" },
    },
    handler: async ({ params, body, auth }) => {
      const answer = await requestErasure(deps, callerId(auth), params.workspace_id, body);
      return answer.finished
        ? { body: answer.body }
        : { status: 202, body: answer.body, headers: { Location: answer.body.next, "Retry-After": "1" } };
    },
  }),
  defineRoute({
    method: "get",
    path: erasures,
    summary: "List a workspace's author erasures, newest first",
    tags,
    auth: AUTH.full,
    role: "admin",
    params: WorkspaceParams,
    query: ListQuery,
    responses: { 200: { description: "Erasures", schema: ErasureList } },
    handler: async ({ params, query, auth }) => ({
      body: await listErasures(deps, callerId(auth), params.workspace_id, query.limit ?? 100),
    }),
  }),
  defineRoute({
    method: "get",
    path: `${erasures}/:erasure_id`,
    summary: "Read one author erasure and its progress",
    tags,
    auth: AUTH.full,
    role: "admin",
    params: ErasureParams,
    responses: { 200: { description: "The erasure", schema: ErasureRecord } },
    handler: async ({ params, auth }) => ({
      body: await readErasure(deps, callerId(auth), params.workspace_id, params.erasure_id),
    }),
  }),
  defineRoute({
    method: "delete",
    path: workspace,
    summary: "Delete a workspace (its owner): invisible at once, restorable until purge_after, then purged",
    description:
      "The workspace turns `deleting` with `purge_after` = now + WORKSPACE_DELETE_GRACE_HOURS (default 168). From then on " +
      "its members and their API keys get 404 for it, its share links open nothing, its webhooks send nothing, its routines " +
      "are paused and its running jobs are cancelled. Its owners still see it in `GET /api/workspaces` and may restore it " +
      "until `purge_after`; after that a scheduled pass deletes everything of it. Deleting it again answers the same. " +
      "A personal workspace cannot be deleted (409). Takes a bearer: keys do not delete workspaces.",
    tags,
    auth: AUTH.bearerOnly,
    role: "owner",
    params: WorkspaceParams,
    responses: {
      200: { description: "The workspace, now deleting", schema: WorkspaceState },
      409: { description: "A personal workspace (conflict)" },
    },
    handler: async ({ params, auth }) => ({ body: await deleteWorkspace(deps, callerId(auth), params.workspace_id) }),
  }),
  defineRoute({
    method: "post",
    path: `${workspace}/restore`,
    summary: "Restore a workspace its owner deleted, before its purge (routines stay paused until re-enabled)",
    description:
      "Back to `active` with its members, keys, share links and webhooks as they were; routines stay paused until an admin " +
      "enables them again, and cancelled jobs stay cancelled. An active workspace answers as it is. After `purge_after` " +
      "the answer is 409: the purge has begun.",
    tags,
    auth: AUTH.bearerOnly,
    role: "owner",
    params: WorkspaceParams,
    responses: {
      200: { description: "The workspace, active", schema: WorkspaceState },
      409: { description: "The grace period has ended (conflict)" },
    },
    handler: async ({ params, auth }) => ({ body: await restoreWorkspace(deps, callerId(auth), params.workspace_id) }),
  }),
  defineRoute({
    method: "patch",
    path: workspace,
    summary: "Change a workspace's settings (admins): retention_days",
    description:
      "`retention_days` (1–3650, or null for forever): stored originals older than that (by when they were stored) are " +
      "deleted by the scheduled retention pass, as `DELETE /agent/v1/content/{content_id}` deletes one, with reason `retention`.",
    tags,
    auth: AUTH.full,
    role: "admin",
    params: WorkspaceParams,
    body: WorkspaceSettingsBody,
    responses: { 200: { description: "The workspace as changed", schema: WorkspaceState } },
    handler: async ({ params, body, auth }) => ({
      body: await updateWorkspaceSettings(deps, callerId(auth), params.workspace_id, body),
    }),
  }),
  defineRoute({
    method: "get",
    path: `${workspace}/retention`,
    summary: "What the retention passes removed in a workspace (admins)",
    tags,
    auth: AUTH.full,
    role: "admin",
    params: WorkspaceParams,
    responses: { 200: { description: "The retention report", schema: RetentionReport } },
    handler: async ({ params, auth }) => ({ body: await readRetention(deps, callerId(auth), params.workspace_id) }),
  }),
];
