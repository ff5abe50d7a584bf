import { z } from "zod";
import { isoDateTime } from "../../platform/dates.js";
import { linkUrl } from "../../platform/links.js";
import { optional, withDefault } from "../../platform/validation.js";
import { CoverageState, Platform } from "../../platform/vocabulary.js";

export { CoverageState, Platform } from "../../platform/vocabulary.js";

/**
 * Content ingest, exactly to the spec's request and response tables. Optional fields
 * accept null as absent; unknown fields are ignored.
 */

/** An ISO 8601 datetime (offset, `Z` or none: read as UTC) or date, as a Date. */
const PublishedAt = isoDateTime();

const Count = z.number().int().min(0);

export const Engagement = z.object({
  likes: optional(Count),
  comments: optional(Count),
  views: optional(Count),
  score: optional(Count),
  shares: optional(Count),
});

const Metadata = z.record(z.string(), z.unknown());

export const CommentItem = z.object({
  id: optional(z.string().max(500)),
  url: optional(linkUrl({ max: 5000 })),
  published_at: optional(PublishedAt),
  metadata: optional(Metadata),
  text: z.string().min(1).max(50_000),
  author: withDefault(z.string().max(500), "unknown"),
  likes: optional(Count),
  replies: optional(Count),
});
export type CommentItem = z.output<typeof CommentItem>;

export const SourceItem = z.object({
  id: optional(z.string().max(500)),
  title: withDefault(z.string().max(2000), ""),
  url: withDefault(linkUrl({ max: 5000 }), ""),
  platform: Platform,
  content: z.string().min(1).max(500_000),
  author: withDefault(z.string().max(500), ""),
  published_at: optional(PublishedAt),
  engagement: optional(Engagement),
  comments: withDefault(z.array(CommentItem), []),
  metadata: optional(Metadata),
});
export type SourceItem = z.output<typeof SourceItem>;

const batchFields = {
  sources: z.array(SourceItem).min(1).max(500),
  collection_run_id: optional(z.string().max(200)),
  collection_scope: optional(z.string().max(200)),
  coverage_state: optional(CoverageState),
};

export const IngestRequestBody = z.object({ entity_id: z.string().min(1).max(100), ...batchFields });

/** The request minus `entity_id`: what collectors and the notes import pass to `ingestContent`. */
export const IngestRequestSchema = z.object(batchFields);
export type IngestRequest = z.output<typeof IngestRequestSchema>;

export const COUNT_BASIS =
  "Counts are acknowledged original records (sources and their comments), including reused originals that were already stored; they are not counts of unique people.";

export const IngestResponse = z.object({
  inserted: z.number().int(),
  skipped_dedup: z.number().int(),
  skipped_irrelevant: z.number().int(),
  skipped_erased: z
    .number()
    .int()
    .describe(
      "Items not stored because their author was erased in this workspace (POST /api/workspaces/{workspace_id}/erasures), with the comments of such a source; each keeps its place in parent_content_ids/comment_content_ids with an empty id",
    ),
  total_received: z.number().int(),
  stored: z.number().int(),
  content_ids: z.array(z.string()),
  parent_content_ids: z.array(z.string()),
  comment_content_ids: z.array(z.string()),
  comments_received: z.number().int(),
  comments_inserted: z.number().int(),
  complete: z.boolean(),
  count_basis: z.string(),
});
export type IngestResponse = z.infer<typeof IngestResponse>;
