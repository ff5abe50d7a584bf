import { z } from "zod";
import { AUTH, callerId } from "../platform/auth.js";
import type { AppDeps } from "../platform/deps.js";
import { defineRoute } from "../platform/http/route.js";
import { optional, queryInt } from "../platform/validation.js";
import { deleteContent } from "./content.js";
import { listErasures, readErasure, requestErasure } from "./erasures.js";
import { ContentParams, DeletionReceipt, ErasureBody, ErasureList, ErasureParams, ErasureRecord, WorkspaceParams } from "./schemas.js";

const tags = ["deletion"];
const erasures = "/api/workspaces/:workspace_id/erasures";
const ListQuery = z.object({ limit: optional(queryInt(1, 500)) });

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
];
