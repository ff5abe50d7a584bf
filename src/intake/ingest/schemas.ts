import { z } from "zod";
import { isoDateTime } from "../../platform/dates.js";
import { linkUrl } from "../../platform/links.js";
import { optional } from "../../platform/validation.js";
import { CoverageState, Platform } from "../../platform/vocabulary.js";

export { CoverageState, Platform } from "../../platform/vocabulary.js";

/**
 * Content ingest, exactly to the spec's request and response tables. Optional fields
 * accept null as absent; unknown fields are ignored.
 */

/** An ISO 8601 datetime (offset, `Z` or none: read as UTC) or date, as a Date. */
const PublishedAt = isoDateTime();

const Count = z.number().int().min(0);
const Metadata = z.record(z.string(), z.unknown());

/*
 * The items of a batch (up to 500 sources and their comments) read null as absent for the whole
 * object in one step: `optional()` and `withDefault()` put a transform on every field, which tripled
 * the validation time of a 3,000-row batch (docs/benchmarks.md, "Ingest throughput"). The fields
 * accept exactly what those helpers accept, and the output is the same.
 */
const absent = <T>(value: T | null | undefined): T | undefined => (value === null ? undefined : value);

const EngagementFields = z.object({
  likes: Count.nullish(),
  comments: Count.nullish(),
  views: Count.nullish(),
  score: Count.nullish(),
  shares: Count.nullish(),
});
type Counts = { likes?: number; comments?: number; views?: number; score?: number; shares?: number };
const engagementOf = (e: z.output<typeof EngagementFields>): Counts => ({
  likes: absent(e.likes),
  comments: absent(e.comments),
  views: absent(e.views),
  score: absent(e.score),
  shares: absent(e.shares),
});
const CommentFields = z.object({
  id: z.string().max(500).nullish(),
  url: linkUrl({ max: 5000 }).nullish(),
  published_at: PublishedAt.nullish(),
  metadata: Metadata.nullish(),
  text: z.string().min(1).max(50_000),
  author: z.string().max(500).nullish(),
  likes: Count.nullish(),
  replies: Count.nullish(),
});
export interface CommentItem {
  id?: string | undefined;
  url?: string | undefined;
  published_at?: Date | undefined;
  metadata?: Record<string, unknown> | undefined;
  text: string;
  author: string;
  likes?: number | undefined;
  replies?: number | undefined;
}
const commentOf = (c: z.output<typeof CommentFields>): CommentItem => ({
  id: absent(c.id),
  url: absent(c.url),
  published_at: absent(c.published_at),
  metadata: absent(c.metadata),
  text: c.text,
  author: c.author ?? "unknown",
  likes: absent(c.likes),
  replies: absent(c.replies),
});
export const CommentItem = CommentFields.transform(commentOf);

const SourceFields = z.object({
  id: z.string().max(500).nullish(),
  title: z.string().max(2000).nullish(),
  url: linkUrl({ max: 5000 }).nullish(),
  platform: Platform,
  content: z.string().min(1).max(500_000),
  author: z.string().max(500).nullish(),
  published_at: PublishedAt.nullish(),
  engagement: EngagementFields.nullish(),
  comments: z.array(CommentFields).nullish(),
  metadata: Metadata.nullish(),
});
export interface SourceItem {
  id?: string | undefined;
  title: string;
  url: string;
  platform: z.output<typeof Platform>;
  content: string;
  author: string;
  published_at?: Date | undefined;
  engagement?: Counts | undefined;
  comments: CommentItem[];
  metadata?: Record<string, unknown> | undefined;
}
export const SourceItem = SourceFields.transform(
  (s): SourceItem => ({
    id: absent(s.id),
    title: s.title ?? "",
    url: s.url ?? "",
    platform: s.platform,
    content: s.content,
    author: s.author ?? "",
    published_at: absent(s.published_at),
    engagement: s.engagement == null ? undefined : engagementOf(s.engagement),
    comments: s.comments == null ? [] : s.comments.map(commentOf),
    metadata: absent(s.metadata),
  }),
);

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
