import { z } from "zod";
import { SEARCH_PLATFORMS } from "../../../insights/search/schemas.js";
import { ACTION_STATUSES, OBJECT_TYPES } from "../../../workflows/actions/schemas.js";
import { argumentError, type CallContext, invoke, notServed, type Operation, pick, queryOf, requireString } from "../invoke.js";
import type { Args, Mode, ToolDefinition } from "./types.js";

/**
 * `recall`: reads. Each mode is one GET (or the public search POST) of the HTTP API, with
 * the reference client's argument names (`@crowdlisten/harness` 2.2.3, `V2_TOOLS`).
 */
const read = async (ctx: CallContext, op: Operation) => (await invoke(ctx, op)).body as Record<string, unknown>;

const scope = (args: Args) => pick(args, ["entity_id", "project_id"]);
const clamp = (value: unknown, min: number, max: number, fallback: number) => {
  const n = typeof value === "number" && Number.isFinite(value) ? value : fallback;
  return Math.min(max, Math.max(min, n));
};

const entityPath = (args: Args, mode: string) => ({ entity_id: requireString(args, "entity_id", `${mode} reads one entity's records`) });

const modes: Record<string, Mode> = {
  search: {
    summary: "the caller's saved context pages, keyword and vector rankings fused (query; limit ≤ 20, default 20; project_id)",
    routes: ["GET /agent/v1/context/recall"],
    run: (ctx, args) =>
      read(ctx, {
        route: "GET /agent/v1/context/recall",
        // The reference client asks for 20 unless told otherwise and never more than the route's 20.
        query: { ...queryOf(args, ["query", "project_id"]), limit: String(Math.trunc(clamp(args.limit, 1, 20, 20))) },
      }),
  },
  discover: {
    summary: "public evidence search without synthesis (query, platforms, limit ≤ 200, date_from); saves nothing",
    routes: ["POST /agent/v1/search"],
    run: (ctx, args) => read(ctx, { route: "POST /agent/v1/search", body: pick(args, ["query", "platforms", "limit", "date_from"]) }),
  },
  connection: {
    summary: "who the credential acts as, and the scope it reaches (optional entity_id or project_id)",
    routes: ["GET /agent/v1/connection"],
    run: async (ctx, args) => ({
      ...(await read(ctx, { route: "GET /agent/v1/connection", query: queryOf(args, ["entity_id", "project_id"]) })),
      client_interface: "mcp",
    }),
  },
  entities: {
    summary: "the entities the caller can see, with their saved configuration (workspace_id, project_id, kind filters)",
    routes: ["GET /api/entities"],
    run: async (ctx, args) => {
      const { body } = await invoke(ctx, { route: "GET /api/entities", query: queryOf(args, ["workspace_id", "project_id", "kind"]) });
      const entities = body as unknown[];
      return { entities, count: entities.length };
    },
  },
  collection_plan: {
    summary: "an entity's saved collection scope and one task per platform and target; starts nothing (entity_id)",
    routes: ["GET /agent/v1/ingest/collection-plan"],
    run: (ctx, args) =>
      read(ctx, {
        route: "GET /agent/v1/ingest/collection-plan",
        query: queryOf({ entity_id: requireString(args, "entity_id", "the plan is an entity's") }, ["entity_id"]),
      }),
  },
  skills: {
    summary: "an entity's saved skills (entity_id)",
    routes: ["GET /api/entities/:entity_id/skills"],
    run: (ctx, args) => read(ctx, { route: "GET /api/entities/:entity_id/skills", params: entityPath(args, "skills") }),
  },
  routines: {
    summary: "an entity's routines and whether the scheduler runs (entity_id)",
    routes: ["GET /api/entities/:entity_id/skill-routines"],
    run: (ctx, args) => read(ctx, { route: "GET /api/entities/:entity_id/skill-routines", params: entityPath(args, "routines") }),
  },
  skill_runs: {
    summary: "an entity's skill runs, newest first (entity_id)",
    routes: ["GET /api/entities/:entity_id/skill-runs"],
    run: (ctx, args) => read(ctx, { route: "GET /api/entities/:entity_id/skill-runs", params: entityPath(args, "skill_runs") }),
  },
  knowledge: {
    summary:
      "knowledge records of one entity_id or project_id: a list (query, tag, sort, order, limit, offset), or one record with insight_id (revision, include_evidence)",
    routes: ["GET /agent/v1/knowledge/insights", "GET /agent/v1/knowledge/insights/:insight_id"],
    run: (ctx, args) =>
      args.insight_id !== undefined && args.insight_id !== null
        ? read(ctx, {
            route: "GET /agent/v1/knowledge/insights/:insight_id",
            params: { insight_id: args.insight_id },
            query: { ...queryOf(args, ["revision", "include_evidence"]), ...scope(args) },
          })
        : read(ctx, {
            route: "GET /agent/v1/knowledge/insights",
            query: { ...queryOf(args, ["query", "tag", "sort", "order", "limit", "offset"]), ...scope(args) },
          }),
  },
  knowledge_context: {
    summary: "the scope's current records with their quotes as bounded Markdown (max_chars 500–50,000, limit, offset)",
    routes: ["GET /agent/v1/knowledge/context"],
    run: (ctx, args) =>
      read(ctx, {
        route: "GET /agent/v1/knowledge/context",
        query: { ...queryOf(args, ["max_chars", "limit", "offset"]), ...scope(args) },
      }),
  },
  knowledge_changes: {
    summary: "the scope's revision feed after a checkpoint (after: the next_after string, limit)",
    routes: ["GET /agent/v1/knowledge/changes"],
    run: (ctx, args) =>
      read(ctx, { route: "GET /agent/v1/knowledge/changes", query: { ...queryOf(args, ["after", "limit"]), ...scope(args) } }),
  },
  knowledge_source: {
    summary: "the scope's originals (offset, limit), one original by content_id, or one captured snapshot by source_revision_id",
    routes: [
      "GET /agent/v1/knowledge/content",
      "GET /agent/v1/knowledge/content/:content_id",
      "GET /agent/v1/knowledge/sources/:source_revision_id",
    ],
    run: (ctx, args) => {
      if (args.acquisition_history === true) {
        throw notServed("knowledge_source acquisition_history is not served: this service keeps no provider refresh history of originals.");
      }
      const query = { ...queryOf(args, ["personal"]), ...scope(args) };
      if (args.source_revision_id !== undefined && args.source_revision_id !== null) {
        return read(ctx, {
          route: "GET /agent/v1/knowledge/sources/:source_revision_id",
          params: { source_revision_id: args.source_revision_id },
          query,
        });
      }
      if (args.content_id !== undefined && args.content_id !== null) {
        return read(ctx, { route: "GET /agent/v1/knowledge/content/:content_id", params: { content_id: args.content_id }, query });
      }
      return read(ctx, { route: "GET /agent/v1/knowledge/content", query: { ...query, ...queryOf(args, ["offset", "limit"]) } });
    },
  },
  intelligence: {
    summary:
      "an entity's readout over window_days (7–365, default 30) and the window before: coverage, themes with quotes, changes, competitor gaps",
    routes: ["GET /agent/v1/intelligence/summary"],
    run: (ctx, args) => {
      const entityId = requireString(
        args,
        "entity_id",
        "give the entity's id (list them with mode entities; entity_name is not looked up)",
      );
      // The reference client keeps the window within 7–365 days rather than refusing it.
      const windowDays = Math.round(clamp(args.window_days, 7, 365, 30));
      return read(ctx, { route: "GET /agent/v1/intelligence/summary", query: { entity_id: entityId, window_days: String(windowDays) } });
    },
  },
  actions: {
    summary:
      "an entity's saved actions with their evidence; open and acting unless status says otherwise (object_type, status, limit ≤ 200, offset)",
    routes: ["GET /api/sweeps/objects"],
    run: (ctx, args) => {
      const entityId = requireString(args, "entity_id", "actions are an entity's");
      const limit = Math.trunc(clamp(args.limit, 1, 200, 50));
      return read(ctx, {
        route: "GET /api/sweeps/objects",
        query: { entity_id: entityId, limit: String(limit), ...queryOf(args, ["offset", "object_type", "status"]) },
      });
    },
  },
  theme_sources: {
    summary:
      "every source behind one insight of an analysis, a page at a time (analysis_id, insight: the insight's id in the result; sort representative (default) or newest, limit ≤ 200, default 50, cursor: the next_cursor of the previous page)",
    routes: ["GET /agent/v1/analysis/:analysis_id/insights/:n/sources"],
    run: (ctx, args) => {
      const analysisId = requireString(args, "analysis_id", "the analysis whose insight to open (analyze run answers it)");
      const insight = args.insight;
      if (insight === undefined || insight === null)
        throw argumentError(["insight"], "Field required: the insight's id in the result", "missing");
      const limit = Math.trunc(clamp(args.limit, 1, 200, 50));
      return read(ctx, {
        route: "GET /agent/v1/analysis/:analysis_id/insights/:n/sources",
        params: { analysis_id: analysisId, n: String(insight) },
        query: { ...queryOf(args, ["sort", "cursor"]), limit: String(limit) },
      });
    },
  },
  workspaces: {
    summary: "not served here; mode entities lists each entity with its workspace_id",
    routes: [],
    run: async () => {
      throw notServed("recall mode 'workspaces' is not served by this service; use mode 'entities', whose records carry workspace_id.");
    },
  },
  projects: {
    summary: "not served here (no project record store)",
    routes: [],
    run: async () => {
      throw notServed(
        "recall mode 'projects' is not served by this service: it keeps no typed project records (canvases, documents, messages).",
      );
    },
  },
  insights: {
    summary: "not served here; use knowledge (versioned findings) or intelligence",
    routes: [],
    run: async () => {
      throw notServed(
        "recall mode 'insights' is not served by this service; use mode 'knowledge' for findings or 'intelligence' for an entity's readout.",
      );
    },
  },
  content: {
    summary: "not served here; use knowledge_source (an entity's originals) or discover (public search)",
    routes: [],
    run: async () => {
      throw notServed(
        "recall mode 'content' is not served by this service; use mode 'knowledge_source' for an entity's originals or 'discover'.",
      );
    },
  },
};

const text = z.string();
const int = z.number().int();

export const RecallArgs = z.looseObject({
  mode: z
    .enum(Object.keys(modes) as [string, ...string[]])
    .nullish()
    .describe("What to recall. Default: search"),
  query: text.nullish().describe("search and discover: the query; knowledge: a literal title search"),
  platforms: z.array(z.enum(SEARCH_PLATFORMS)).nullish().describe("discover: public platforms to search"),
  date_from: text.nullish().describe("discover: ISO 8601 date or datetime floor"),
  entity_id: text.nullish().describe("Entity UUID"),
  project_id: text.nullish().describe("Project UUID"),
  workspace_id: text.nullish().describe("entities: only this workspace's"),
  kind: z.enum(["company", "product", "competitor"]).nullish().describe("entities: only this kind"),
  insight_id: text.nullish().describe("knowledge: read this record"),
  revision: int.min(1).nullish().describe("knowledge with insight_id: an exact historical revision"),
  include_evidence: z.boolean().nullish().describe("knowledge with insight_id: resolve its evidence (default true)"),
  tag: text.nullish().describe("knowledge: exact tag filter"),
  sort: z
    .enum(["updated_at", "created_at", "title", "representative", "newest"])
    .nullish()
    .describe("knowledge: sort field (updated_at, created_at, title); theme_sources: representative (default) or newest"),
  order: z.enum(["asc", "desc"]).nullish().describe("knowledge: direction (default desc)"),
  after: text
    .regex(/^[0-9]+$/)
    .nullish()
    .describe("knowledge_changes: the checkpoint (next_after, a string); default '0'"),
  max_chars: int.min(500).max(50_000).nullish().describe("knowledge_context: Markdown budget (default 16000)"),
  content_id: text.nullish().describe("knowledge_source: read this original"),
  analysis_id: text.nullish().describe("theme_sources: the analysis"),
  insight: int.min(1).nullish().describe("theme_sources: the insight's id in the analysis's result (its number, from 1)"),
  cursor: text.nullish().describe("theme_sources: the next_cursor of the previous page"),
  source_revision_id: text.nullish().describe("knowledge_source: read this captured snapshot"),
  window_days: z.number().nullish().describe("intelligence: window in days (7–365, default 30)"),
  object_type: z.enum(OBJECT_TYPES).nullish().describe("actions: only this type"),
  status: z.enum(ACTION_STATUSES).nullish().describe("actions: only this status (default: open and acting)"),
  limit: z.number().nullish().describe("Max results"),
  offset: int.min(0).nullish().describe("Paging offset; follow next_offset"),
});

export const recallTool: ToolDefinition = {
  name: "recall",
  title: "Recall",
  intro:
    "Read what this service holds: saved context, public evidence, entities, skills and runs, knowledge records and their sources, every source behind an analysis's insight, intelligence and actions.",
  selector: "mode",
  defaultMode: () => "search",
  modes,
  inputSchema: RecallArgs,
};
