import { z } from "zod";
import { cursorParam } from "../../platform/cursor.js";
import { queryInt } from "../../platform/validation.js";
import { ANALYSIS_STATUSES } from "./schemas.js";

/** `GET /api/analyses`: the analyses a caller may read, newest first, a page at a time. */
export const DEFAULT_LIST_LIMIT = 50;
export const MAX_LIST_LIMIT = 200;

export const ListAnalysesQuery = z.object({
  entity_id: z.uuid().optional().describe("Only analyses run on this entity"),
  project_id: z.uuid().optional().describe("Only analyses run on this project"),
  workspace_id: z.uuid().optional().describe("Only this workspace's analyses"),
  status: z.enum(ANALYSIS_STATUSES).optional(),
  limit: queryInt(1, MAX_LIST_LIMIT).optional().describe(`Analyses per page: 1 to ${MAX_LIST_LIMIT}, default ${DEFAULT_LIST_LIMIT}`),
  cursor: cursorParam().optional().describe("The next_cursor of the previous page"),
});
export type ListAnalysesQuery = z.output<typeof ListAnalysesQuery>;

export const AnalysisListItem = z.object({
  analysis_id: z.uuid(),
  question: z.string(),
  status: z.enum(ANALYSIS_STATUSES),
  depth: z.string(),
  search_mode: z.string(),
  scope: z.object({
    workspace_id: z.uuid().nullable().describe("null: an analysis naming no entity or project, its starter's alone"),
    entity_id: z.uuid().nullable(),
    project_id: z.uuid().nullable(),
  }),
  started_by: z.uuid().describe("The user who started it"),
  created_at: z.string(),
  finished_at: z.string().nullable(),
  counts: z
    .object({
      sources_in_scope: z.number().int().describe("Stored originals in scope when it ran"),
      sources_analysed: z.number().int().describe("Originals it read"),
      sources_cited: z.number().int().describe("Distinct originals its evidence quotes"),
      insights: z.number().int(),
      evidence: z.number().int(),
    })
    .nullable()
    .describe("From the stored result; null until there is one (queued, running, failed, cancelled)"),
  links: z.object({
    self: z.string().describe("GET: the analysis with its result"),
    events: z.string().describe("GET: its event stream (SSE), replayed and followed live"),
    share: z
      .object({
        method: z.literal("POST"),
        href: z.string(),
        body: z.object({ resource: z.literal("analysis"), id: z.uuid() }),
      })
      .describe("Creates a share link for it (an editor or above); the link's URL is shown only in that answer"),
  }),
});
export type AnalysisListItem = z.infer<typeof AnalysisListItem>;

export const AnalysisList = z.object({
  analyses: z.array(AnalysisListItem),
  limit: z.number().int(),
  has_more: z.boolean(),
  next_cursor: z.string().nullable().describe("Pass as `cursor` for the next page; null on the last"),
});
export type AnalysisList = z.infer<typeof AnalysisList>;
