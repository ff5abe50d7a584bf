import { z } from "zod";
import { ScopeQuery } from "../../insights/knowledge/schemas.js";
import { AUTH, callerId } from "../../platform/auth.js";
import type { AppDeps } from "../../platform/deps.js";
import { defineRoute } from "../../platform/http/route.js";
import { pathId } from "../../platform/validation.js";
import { deleteContent } from "./content.js";
import { readEntityDeletion, requestEntityDeletion } from "./entities.js";
import { deleteContextPage } from "./pages.js";
import { readProjectDeletion, requestProjectDeletion } from "./projects.js";
import { deleteKnowledgeRecord } from "./records.js";
import {
  ContentParams,
  DeletionReceipt,
  EntityDeletionRecord,
  EntityParams,
  PageDeletionReceipt,
  PageParams,
  ProjectDeletionRecord,
  ProjectParams,
  RecordDeletionReceipt,
} from "./schemas.js";
import { workspaceDeletionRoutes } from "./workspace-routes.js";

/** Deleting one thing: an original, a knowledge record, a saved page, an entity, a project (workspace-wide routes: workspace-routes.ts). */
const tags = ["deletion"];
const InsightParams = z.object({ insight_id: pathId("Insight") });

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
  ...workspaceDeletionRoutes(deps),
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
  defineRoute({
    method: "delete",
    path: "/api/projects/:project_id",
    summary: "Delete a project with its entities and everything stored for them: each entity as its own deletion, then the project (202)",
    description:
      "Admins only. The deletion is recorded with one entity deletion per entity of the project (from then on no original " +
      "of them is stored, their routines are paused, and no entity, analysis, knowledge record or saved page can name the " +
      "project anew); every job still working on its entities, and every analysis naming the project, is cancelled through " +
      "its own cancel. A job deletes each entity exactly as `DELETE /api/entities/{entity_id}` does, then, in one " +
      "transaction, the project with its analyses, its knowledge records and share links to them; skills and users' saved " +
      "context pages that named it stay, without the project. Poll `next`. Asking again answers the same deletion " +
      "(resumed if it had failed); once completed, 204. Audited (`project.deletion_requested`, `entity.deleted` per " +
      "entity, `project.deleted`).",
    tags: ["projects", ...tags],
    auth: AUTH.full,
    role: "admin",
    params: ProjectParams,
    responses: {
      202: { description: "The deletion, running: poll `next`", schema: ProjectDeletionRecord },
      204: { description: "Already deleted: nothing was removed" },
      403: { description: "The caller's role is below admin" },
      404: { description: "No such project in a workspace of the caller" },
      503: { description: "The job queue is unavailable (the deletion is recorded; delete again to resume)" },
    },
    handler: async ({ params, auth }) => {
      const record = await requestProjectDeletion(deps, callerId(auth), params.project_id);
      return record ? { status: 202, body: record, headers: { Location: record.next, "Retry-After": "1" } } : { status: 204 };
    },
  }),
  defineRoute({
    method: "get",
    path: "/api/projects/:project_id/deletion",
    summary: "Read a project's deletion, its progress and its entity deletions (also after the project is gone)",
    tags: ["projects", ...tags],
    auth: AUTH.full,
    role: "viewer",
    params: ProjectParams,
    responses: {
      200: { description: "The deletion", schema: ProjectDeletionRecord },
      404: { description: "No such project of the caller, or no deletion of it was requested" },
    },
    handler: async ({ params, auth }) => ({ body: await readProjectDeletion(deps.db, callerId(auth), params.project_id) }),
  }),
];
