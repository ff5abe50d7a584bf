import { cancelRoute } from "../../jobs/routes.js";
import { AUTH, type AuthContext, callerId } from "../../platform/auth.js";
import type { AppDeps } from "../../platform/deps.js";
import { defineRoute } from "../../platform/http/route.js";
import { parseLastEventId } from "../../platform/sse.js";
import { cancelAnalysis, submitAnalysis } from "./jobs.js";
import { listAnalyses } from "./list.js";
import { AnalysisList, ListAnalysesQuery } from "./list-schemas.js";
import { relayAnalysis } from "./relay.js";
import { AnalysisIdParams, AnalysisRecord, EventsQuery, RunBody, STREAM_DESCRIPTION } from "./schemas.js";
import { cancellableAnalysis, readableAnalysis, toAnalysisRecord } from "./service.js";
import { readThemeSources } from "./theme-sources-read.js";
import { insightNumber, SourcesParams, SourcesQuery, ThemeSourcesPage } from "./theme-sources-schemas.js";

const tags = ["analysis"];
const SSE = "text/event-stream";

/**
 * The reads take what a collection job's create and poll take (a bearer, an `ingest` or a
 * `*` key), so every link a job hands out can be followed with the credential that created
 * it; an `ingest` key reads only analyses its collection jobs started (see the service).
 */
const reader = (auth: AuthContext | undefined) => ({
  userId: callerId(auth),
  ingestOnly: auth?.via === "key" && !(auth.key?.scopes ?? []).includes("*"),
});
const readResponses = {
  403: { description: "An ingest key, and the analysis was not started by one of the caller's collection jobs (insufficient_scope)" },
  404: { description: "Unknown or not the caller's" },
};

export const analysisRoutes = (deps: AppDeps) => [
  defineRoute({
    method: "post",
    path: "/agent/v1/analysis/run",
    summary: "Start an analysis and stream its progress, evidence and result (SSE)",
    tags,
    auth: AUTH.bearerOnly,
    role: "editor",
    body: RunBody,
    responses: {
      200: { description: STREAM_DESCRIPTION, contentType: SSE },
      400: {
        description:
          "The scope spans several workspaces: no scope from a member of several, or provided sources of several (scope_required)",
      },
      403: { description: "A viewer (or less than editor) in the workspace the request would read, however it names it (forbidden)" },
      404: { description: "An entity, project or provided source the caller cannot see" },
      409: { description: "The request_id was used for a different request" },
    },
    handler: async ({ body, auth, res }) => {
      const { analysis } = await submitAnalysis(deps, callerId(auth), body);
      await relayAnalysis(deps, res, analysis.id, { afterSeq: 0, headers: { "X-Analysis-Id": analysis.id } });
      return undefined;
    },
  }),
  defineRoute({
    method: "get",
    path: "/api/analyses",
    summary: "List past analyses, newest first: of an entity, a project or a workspace, by status, a page at a time",
    description:
      "Every analysis of the caller's workspaces (whoever started it) and the caller's own analyses of no workspace, " +
      "narrowed by `entity_id`, `project_id`, `workspace_id` and `status`. Pages follow `next_cursor`. Each item links " +
      "to the analysis, its event stream and how to share it.",
    tags,
    auth: AUTH.full,
    role: "viewer",
    query: ListAnalysesQuery,
    responses: {
      200: { description: "A page of analyses, newest first", schema: AnalysisList },
      404: { description: "An entity, project or workspace the caller cannot see" },
    },
    handler: async ({ query, auth }) => ({ body: await listAnalyses(deps.db, callerId(auth), query, deps.config.PUBLIC_BASE_URL ?? "") }),
  }),
  defineRoute({
    method: "get",
    path: "/agent/v1/analysis/:analysis_id",
    summary: "Read an analysis: its status and, once finished, its result",
    tags,
    auth: AUTH.ingest,
    role: "viewer",
    params: AnalysisIdParams,
    responses: { 200: { description: "The analysis", schema: AnalysisRecord }, ...readResponses },
    handler: async ({ params, auth }) => ({ body: toAnalysisRecord(await readableAnalysis(deps.db, reader(auth), params.analysis_id)) }),
  }),
  defineRoute({
    method: "get",
    path: "/agent/v1/analysis/:analysis_id/insights/:n/sources",
    summary: "Every source behind one insight of an analysis, a page at a time",
    description:
      "Each stored source the insight's count covers, for the analysis's scope as it ran: its content id, title, platform, " +
      "author, publication date, url, feedback kind and its best statement for the theme, verbatim with code-point offsets. " +
      "`sort=representative` (default) lists the sources the insight quotes first, then the rest of the analysed sample by " +
      "how well a statement of theirs fits the theme, then (when the count was taken over a scope larger than the sample) the " +
      "rest of the scope's sources newest first; `sort=newest` lists them all by publication (else storage) time. An original " +
      "deleted or erased since is listed as unavailable, without its words. `total` is the count the insight states; " +
      "`count_basis` says what it counts and why the list's length differs from it when it does. Pages follow `next_cursor`.",
    tags,
    auth: AUTH.ingest,
    role: "viewer",
    params: SourcesParams,
    query: SourcesQuery,
    responses: {
      200: { description: "A page of the insight's sources", schema: ThemeSourcesPage },
      403: readResponses[403],
      404: { description: "An analysis unknown or not the caller's, or no insight of that id (none yet while it runs)" },
    },
    handler: async ({ params, query, auth }) => {
      const analysis = await readableAnalysis(deps.db, reader(auth), params.analysis_id);
      return { body: await readThemeSources(deps.db, analysis, insightNumber(params.n), query) };
    },
  }),
  cancelRoute({
    path: "/agent/v1/analysis/:analysis_id/cancel",
    summary: "Cancel an analysis; its stream ends with an `error` event whose status is `cancelled`",
    tags,
    auth: AUTH.ingest,
    params: AnalysisIdParams,
    schema: AnalysisRecord,
    what: "The analysis",
    responses: { 403: readResponses[403] },
    cancel: async (params, auth) => {
      const analysis = await cancellableAnalysis(deps.db, reader(auth), params.analysis_id);
      await cancelAnalysis(deps, analysis.id);
      return toAnalysisRecord(await deps.db.analysis.findUniqueOrThrow({ where: { id: analysis.id } }));
    },
  }),
  defineRoute({
    method: "get",
    path: "/agent/v1/analysis/:analysis_id/events",
    summary: "Replay an analysis's event stream (SSE) after Last-Event-ID, continuing live while it runs",
    tags,
    auth: AUTH.ingest,
    role: "viewer",
    params: AnalysisIdParams,
    query: EventsQuery,
    headers: [{ name: "Last-Event-ID", required: false, description: "Resume after this event id (sequence number)" }],
    responses: { 200: { description: STREAM_DESCRIPTION, contentType: SSE }, ...readResponses },
    handler: async ({ params, query, auth, req, res }) => {
      const analysis = await readableAnalysis(deps.db, reader(auth), params.analysis_id);
      const header = req.headers["last-event-id"];
      const afterSeq = header !== undefined ? parseLastEventId(header) : parseLastEventId(query.last_event_id);
      await relayAnalysis(deps, res, analysis.id, { afterSeq, headers: { "X-Analysis-Id": analysis.id } });
      return undefined;
    },
  }),
];
