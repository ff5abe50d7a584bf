import { z } from "zod";
import { ScopeQuery } from "../knowledge/schemas.js";
import { AUTH, callerId } from "../platform/auth.js";
import type { AppDeps } from "../platform/deps.js";
import { defineRoute } from "../platform/http/route.js";
import { optional, pathId, queryInt } from "../platform/validation.js";
import { deleteContent } from "./content.js";
import { readEntityDeletion, requestEntityDeletion } from "./entities.js";
import { listErasures, readErasure, requestErasure } from "./erasures.js";
import { deleteContextPage } from "./pages.js";
import { deleteKnowledgeRecord } from "./records.js";
import { readRetention, updateWorkspaceSettings } from "./retention.js";
import {
  ContentParams,
  DeletionReceipt,
  EntityDeletionRecord,
  EntityParams,
  ErasureBody,
  ErasureList,
  ErasureParams,
  ErasureRecord,
  PageDeletionReceipt,
  PageParams,
  RecordDeletionReceipt,
  RetentionReport,
  WorkspaceParams,
  WorkspaceSettingsBody,
  WorkspaceState,
} from "./schemas.js";
import { deleteWorkspace, restoreWorkspace } from "./workspaces.js";

const tags = ["deletion"];
const erasures = "/api/workspaces/:workspace_id/erasures";
const ListQuery = z.object({ limit: optional(queryInt(1, 500)) });
const InsightParams = z.object({ insight_id: pathId("Insight") });
const workspace = "/api/workspaces/:workspace_id";

export const deletionRoutes = (deps: AppDeps) => [
  defineRoute({
    method: "delete",
    path: "/agent/v1/content/:content_id",
    summary: "Delete a stored original with every comment below it (deleting it again answers 204)",
    description:
      "One transaction: the original and its comments, their opinion units, embeddings and full-text entries go; " +
      "knowledge snapshots of them lose their text; analyses and knowledge records that quoted them keep their own " +
      "text and each citation, marked unavailable (`unavailable: {reason, at}`) without the quote. Recorded in the " +
      "workspace audit log (`content.deleted`).",
    tags,
    auth: AUTH.ingest,
    role: "editor",
    params: ContentParams,
    responses: {
      200: { description: "Deleted: what went", schema: DeletionReceipt },
      204: { description: "Already deleted: nothing was removed" },
      404: { description: "No such original in a workspace of the caller" },
    },
    handler: async ({ params, auth }) => {
      const receipt = await deleteContent(deps.db, callerId(auth), params.content_id);
      return receipt ? { body: receipt } : { status: 204 };
    },
  }),
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
  defineRoute({
    method: "delete",
    path: "/agent/v1/knowledge/insights/:insight_id",
    summary: "Delete a knowledge record with its revisions and citations (deleting it again answers 204)",
    description:
      "Exactly one of entity_id or project_id names the record's scope, as on every knowledge route. One transaction: the " +
      "record, its revisions, their citations, its write receipts, the actions derived from it and share links to it go; " +
      "the scope's change feed gets a `deleted` event (title empty) and the record's earlier events keep their numbers " +
      "with their titles cleared. The snapshots it cited stay with their originals. Audited (`knowledge_record.deleted`).",
    tags: ["knowledge", ...tags],
    auth: AUTH.full,
    role: "editor",
    params: InsightParams,
    query: ScopeQuery,
    responses: {
      200: { description: "Deleted: what went", schema: RecordDeletionReceipt },
      204: { description: "Already deleted: nothing was removed" },
      400: { description: "Neither entity_id nor project_id (scope_required)" },
      403: { description: "The caller's role (viewer) may not delete knowledge records" },
      404: { description: "No such record in a scope of the caller" },
    },
    handler: async ({ params, query, auth }) => {
      const receipt = await deleteKnowledgeRecord(deps.db, callerId(auth), params.insight_id, query);
      return receipt ? { body: receipt } : { status: 204 };
    },
  }),
  defineRoute({
    method: "delete",
    path: "/agent/v1/context/pages/:page_id",
    summary: "Delete one of the signed-in user's saved context pages (deleting it again answers 204)",
    description:
      "The page's text, tags, embedding and full-text entry go with its row; recall no longer finds it. Another " +
      "user's page is a 404 like an unknown id.",
    tags: ["context", ...tags],
    auth: AUTH.bearerOnly,
    role: "account",
    params: PageParams,
    responses: {
      200: { description: "Deleted", schema: PageDeletionReceipt },
      204: { description: "Already deleted: nothing was removed" },
      404: { description: "No such page of the caller" },
    },
    handler: async ({ params, auth }) => {
      const receipt = await deleteContextPage(deps.db, callerId(auth), params.page_id);
      return receipt ? { body: receipt } : { status: 204 };
    },
  }),
  defineRoute({
    method: "delete",
    path: "/api/entities/:entity_id",
    summary: "Delete an entity with everything stored for it: cancels its jobs, then deletes its originals in batches (202)",
    description:
      "Admins only. The deletion is recorded (from then on no original of the entity is stored and its routines are " +
      "paused), every job still working on the entity is cancelled through its own cancel (its end announced, its " +
      "webhooks sent), and a job deletes its originals in batches as `DELETE /agent/v1/content/{content_id}` deletes one, " +
      "then the entity with its skills, routines, quotes, runs, jobs, coverage, analyses, knowledge records, actions and " +
      "share links. Entities it was the parent of stay, without a parent. Poll `next`. Asking again answers the same " +
      "deletion (resumed if it had failed); once completed, 204. Audited (`entity.deletion_requested`, `entity.deleted`).",
    tags: ["entities", ...tags],
    auth: AUTH.full,
    role: "admin",
    params: EntityParams,
    responses: {
      202: { description: "The deletion, running: poll `next`", schema: EntityDeletionRecord },
      204: { description: "Already deleted: nothing was removed" },
      403: { description: "The caller's role is below admin" },
      404: { description: "No such entity in a workspace of the caller" },
      503: { description: "The job queue is unavailable (the deletion is recorded; delete again to resume)" },
    },
    handler: async ({ params, auth }) => {
      const record = await requestEntityDeletion(deps, callerId(auth), params.entity_id);
      return record ? { status: 202, body: record, headers: { Location: record.next, "Retry-After": "1" } } : { status: 204 };
    },
  }),
  defineRoute({
    method: "get",
    path: "/api/entities/:entity_id/deletion",
    summary: "Read an entity's deletion and its progress (also after the entity is gone)",
    tags: ["entities", ...tags],
    auth: AUTH.full,
    role: "viewer",
    params: EntityParams,
    responses: {
      200: { description: "The deletion", schema: EntityDeletionRecord },
      404: { description: "No such entity of the caller, or no deletion of it was requested" },
    },
    handler: async ({ params, auth }) => ({ body: await readEntityDeletion(deps.db, callerId(auth), params.entity_id) }),
  }),
];
