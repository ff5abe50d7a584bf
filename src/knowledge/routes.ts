import { AUTH, callerId } from "../platform/auth.js";
import type { AppDeps } from "../platform/deps.js";
import { defineRoute } from "../platform/http/route.js";
import {
  ChangeFeed,
  ChangesQuery,
  ContentList,
  ContentListQuery,
  ContentParams,
  ContentRecord,
  ContextAnswer,
  ContextQuery,
  CreateInsightBody,
  InsightList,
  InsightParams,
  InsightRead,
  ListQuery,
  ReadQuery,
  Receipt,
  ReviseInsightBody,
  ScopeQuery,
  SourceParams,
  SourceRecord,
} from "./schemas.js";
import {
  changesFor,
  contentFor,
  contentListFor,
  contextFor,
  createInsight,
  getInsight,
  listInsightsFor,
  reviseInsight,
  sourceFor,
} from "./service.js";

const tags = ["knowledge"];
const scoped = "exactly one of entity_id or project_id";
const conflicts = {
  409: {
    description:
      "expected_revision is stale (conflict, with current_revision), or the request_id was used for a different payload (idempotency_conflict)",
  },
};
const refused = {
  400: { description: `Neither entity_id nor project_id (scope_required; give ${scoped})` },
  403: { description: "The caller's workspace role (viewer) may read but not write" },
  422: { description: "Invalid input, including a quote that is not verbatim or a relation the source does not allow; nothing is saved" },
};

export const knowledgeRoutes = (deps: AppDeps) => [
  defineRoute({
    method: "post",
    path: "/agent/v1/knowledge/insights",
    summary: "Create a knowledge record (expected_revision 0) whose every quote is checked against a captured snapshot of its source",
    tags,
    auth: AUTH.full,
    body: CreateInsightBody,
    responses: {
      201: { description: "Receipt: saved, replayed, change_seq, record (also answered to a replay)", schema: Receipt },
      ...refused,
      ...conflicts,
    },
    handler: async ({ body, auth }) => createInsight(deps.db, callerId(auth), body),
  }),
  defineRoute({
    method: "get",
    path: "/agent/v1/knowledge/insights",
    summary: "List the scope's current records (title query, tag, sort, order, limit ≤ 100, offset)",
    tags,
    auth: AUTH.full,
    query: ListQuery,
    responses: { 200: { description: "Current records without their evidence", schema: InsightList }, 400: refused[400] },
    handler: async ({ query, auth }) => ({ body: await listInsightsFor(deps.db, callerId(auth), query) }),
  }),
  defineRoute({
    method: "put",
    path: "/agent/v1/knowledge/insights/:insight_id",
    summary: "Revise a record: the complete desired content and the revision last read (a stale one is a 409, never an overwrite)",
    tags,
    auth: AUTH.full,
    params: InsightParams,
    body: ReviseInsightBody,
    responses: {
      200: { description: "Receipt: saved, replayed, change_seq, record", schema: Receipt },
      ...refused,
      ...conflicts,
    },
    handler: async ({ params, body, auth }) => reviseInsight(deps.db, callerId(auth), params.insight_id, body),
  }),
  defineRoute({
    method: "get",
    path: "/agent/v1/knowledge/insights/:insight_id",
    summary: "A record (current, or revision=N) with its captured sources, resolved evidence and unavailable sources",
    tags,
    auth: AUTH.full,
    params: InsightParams,
    query: ReadQuery,
    responses: { 200: { description: "The record", schema: InsightRead }, 400: refused[400] },
    handler: async ({ params, query, auth }) => ({ body: await getInsight(deps.db, callerId(auth), params.insight_id, query) }),
  }),
  defineRoute({
    method: "get",
    path: "/agent/v1/knowledge/changes",
    summary: "The scope's revision feed in commit order: follow next_after (a string cursor) to miss nothing",
    tags,
    auth: AUTH.full,
    query: ChangesQuery,
    responses: { 200: { description: "Events after the cursor", schema: ChangeFeed }, 400: refused[400] },
    handler: async ({ query, auth }) => ({ body: await changesFor(deps.db, callerId(auth), query) }),
  }),
  defineRoute({
    method: "get",
    path: "/agent/v1/knowledge/context",
    summary:
      "The scope's current records with their quotes as Markdown within max_chars (500–50,000); records that do not fit are omitted whole",
    tags,
    auth: AUTH.full,
    query: ContextQuery,
    responses: { 200: { description: "Bounded Markdown and the records it covers", schema: ContextAnswer }, 400: refused[400] },
    handler: async ({ query, auth }) => ({ body: await contextFor(deps.db, callerId(auth), query) }),
  }),
  defineRoute({
    method: "get",
    path: "/agent/v1/knowledge/content",
    summary: "The scope's originals (offset paging), each with whether it may support or only give context",
    tags,
    auth: AUTH.full,
    query: ContentListQuery,
    responses: { 200: { description: "Originals", schema: ContentList }, 400: refused[400] },
    handler: async ({ query, auth }) => ({ body: await contentListFor(deps.db, callerId(auth), query) }),
  }),
  defineRoute({
    method: "get",
    path: "/agent/v1/knowledge/content/:content_id",
    summary: "One original of the scope: its full current text and metadata",
    tags,
    auth: AUTH.full,
    params: ContentParams,
    query: ScopeQuery,
    responses: { 200: { description: "The original", schema: ContentRecord }, 400: refused[400] },
    handler: async ({ params, query, auth }) => ({ body: await contentFor(deps.db, callerId(auth), params.content_id, query) }),
  }),
  defineRoute({
    method: "get",
    path: "/agent/v1/knowledge/sources/:source_revision_id",
    summary: "One captured source snapshot (its text is null once the original was deleted)",
    tags,
    auth: AUTH.full,
    params: SourceParams,
    query: ScopeQuery,
    responses: { 200: { description: "The snapshot", schema: SourceRecord }, 400: refused[400] },
    handler: async ({ params, query, auth }) => ({
      body: await sourceFor(deps.db, callerId(auth), params.source_revision_id, query),
    }),
  }),
];
