import { z } from "zod";
import { optional, queryInt, withDefault } from "../../platform/validation.js";
import { normalisePath, PATH_MAX_INPUT } from "./paths.js";

/** Saved context pages: `POST /agent/v1/context/save` and `GET /agent/v1/context/recall`. */
export const PAGE_CONTENT_MAX = 500_000;
export const PAGE_TITLE_MAX = 500;
export const PAGE_TAGS_MAX = 50;
export const PAGE_TAG_MAX = 100;
export const RECALL_QUERY_MAX = 1000;
export const RECALL_LIMIT_DEFAULT = 10;

const PagePath = z
  .string()
  .max(PATH_MAX_INPUT)
  .transform((raw, ctx) => {
    const result = normalisePath(raw);
    if (result.ok) return result.path;
    ctx.addIssue({ code: "custom", message: result.message, params: { type: "value_error" } });
    return z.NEVER;
  });

export const SaveBody = z.object({
  title: z.string().trim().min(1).max(PAGE_TITLE_MAX),
  content: z.string().max(PAGE_CONTENT_MAX),
  path: optional(PagePath),
  tags: withDefault(z.array(z.string().trim().min(1).max(PAGE_TAG_MAX)).max(PAGE_TAGS_MAX), []).transform((tags) => [...new Set(tags)]),
  project_id: optional(z.uuid()),
});
export type SaveInput = z.output<typeof SaveBody>;

export const SavedPage = z.object({
  id: z.uuid(),
  path: z.string(),
  title: z.string(),
  tags: z.array(z.string()),
  project_id: z.uuid().nullable(),
  created: z.boolean().describe("true when this call created the page, false when it replaced one"),
  version: z.number().int().describe("1 on creation, +1 on every replacement"),
  updated_at: z.string(),
  embedding: z
    .enum(["ready", "pending"])
    .describe("'pending' when the embeddings provider failed; a worker retries, and recall finds the page by keyword meanwhile"),
});
export type SavedPage = z.infer<typeof SavedPage>;

export const RecallQuery = z.object({
  query: z.string().trim().min(1).max(RECALL_QUERY_MAX).describe("Plain words, or web-search syntax (quoted phrases, `or`, `-word`)"),
  limit: withDefault(queryInt(1, 20), RECALL_LIMIT_DEFAULT).describe("Integer 1–20, default 10"),
  project_id: optional(z.uuid()),
});
export type RecallInput = z.output<typeof RecallQuery>;

export const RecallResult = z.object({
  path: z.string(),
  title: z.string(),
  snippet: z.string(),
  score: z.number().describe("Reciprocal rank fusion score of the keyword and vector rankings"),
  tags: z.array(z.string()),
  project_id: z.uuid().nullable(),
  updated_at: z.string(),
});
export type RecallResult = z.infer<typeof RecallResult>;

export const RecallResponse = z.object({
  results: z.array(RecallResult),
  count: z.number().int(),
  query: z.string(),
});
export type RecallResponse = z.infer<typeof RecallResponse>;
