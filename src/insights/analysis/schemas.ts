import { z } from "zod";
import { optional, pathId, withDefault } from "../../platform/validation.js";

/**
 * `POST /agent/v1/analysis/run` (spec operation 7, with DESIGN.md §6: `request_id` and
 * `provided_sources`), the analysis record and its events.
 */
export const SEARCH_MODES = ["knowledge", "multi_source", "web_only", "user_only", "user_first"] as const;
export type SearchMode = (typeof SEARCH_MODES)[number];
/** The mode of a request that names none: every platform. */
export const DEFAULT_SEARCH_MODE: SearchMode = "multi_source";
export const ANALYSIS_PLATFORMS = ["reddit", "twitter", "github", "news"] as const;
export const DEPTHS = ["brief", "deep"] as const;
export type Depth = (typeof DEPTHS)[number];
export const MAX_PROVIDED_SOURCES = 200;

export const RunBody = z.object({
  question: z.string().min(1).max(1000),
  project_id: optional(z.uuid()),
  search_mode: optional(z.enum(SEARCH_MODES)),
  platforms: optional(z.array(z.enum(ANALYSIS_PLATFORMS)).max(ANALYSIS_PLATFORMS.length * 2)),
  entity_id: optional(z.uuid()),
  depth: withDefault(z.enum(DEPTHS), "brief"),
  request_id: optional(z.string().min(8).max(128)),
  provided_sources: optional(
    z
      .array(z.object({ content_id: z.uuid() }))
      .min(1)
      .max(MAX_PROVIDED_SOURCES),
  ),
});
export type RunInput = z.output<typeof RunBody>;

export const AnalysisIdParams = z.object({ analysis_id: pathId("Analysis") });
export const EventsQuery = z.object({
  /** For clients that cannot send the Last-Event-ID header; the header wins when both are sent. */
  last_event_id: optional(z.string().max(100).regex(/^\d+$/)),
});

export const ANALYSIS_STATUSES = ["queued", "running", "completed", "partial", "failed", "cancelled"] as const;
export type AnalysisStatus = (typeof ANALYSIS_STATUSES)[number];
export const TERMINAL_STATUSES: readonly AnalysisStatus[] = ["completed", "partial", "failed", "cancelled"];

/** A citation of an original deleted since (src/governance/deletion): why and when; its quote, url and author are gone. */
export const UnavailableCitation = z.object({
  reason: z.enum(["deleted", "author_erased", "retention", "workspace_deleted"]),
  at: z.string(),
});

export const EvidenceItem = z.object({
  number: z.number().int(),
  content_id: z.string(),
  quote: z.string(),
  url: z.string(),
  platform: z.string(),
  author: z.string(),
  published_at: z.string().nullable(),
  /** What the quoted original is: bug_report, feature_request, question, praise, complaint, other; null until enriched. */
  feedback_kind: z.string().nullable(),
  start_offset: z.number().int(),
  end_offset: z.number().int(),
  opinion_unit_id: z.string().nullable(),
  /** Present once the quoted original was deleted: `quote`, `url` and `author` are then empty. */
  unavailable: UnavailableCitation.optional(),
});
export type EvidenceItem = z.infer<typeof EvidenceItem>;

export const THEME_POLARITIES = ["complaint", "praise", "mixed", "request", "neutral"] as const;

export const InsightItem = z.object({
  /** The insight's number in the analysis (1-based), stable for the analysis's life; absent from results stored before it. */
  id: z.number().int().optional(),
  title: z.string(),
  summary: z.string(),
  sentiment: z.enum(["positive", "negative", "mixed", "neutral"]),
  confidence: z.number(),
  evidence: z.array(EvidenceItem),
  /** The aspect the insight is about ("pricing", "web clipper", "overall"); null when a language model wrote it. */
  aspect: z.string().nullable(),
  /**
   * What the sources say about the aspect: complaint, praise, request (feature requests) or
   * neutral (mentioned without an opinion). An aspect with complaints and praise has one
   * insight for each side. "mixed" only for a language model's insight of mixed sentiment.
   */
  polarity: z.enum(THEME_POLARITIES),
  /**
   * Distinct sources behind the insight. For the extractive engine: on the insight's side of its aspect
   * among every stored, enriched original in the analysis's scope (from the stored opinion units), quoted
   * or not; where the stored units cannot name the theme (a request theme named after a capability), the
   * analysed sample's. `sources_analysed` is the analysed sample's count.
   */
  sources: z.number().int(),
  sources_analysed: z.number().int().optional(),
  /** The aspect's distinct sources on each side (extractive engine only): a split aspect shows both counts. */
  counts: z
    .object({ complaint: z.number().int(), praise: z.number().int(), neutral: z.number().int(), request: z.number().int() })
    .optional(),
  /** Every source behind the insight, a page at a time: `/agent/v1/analysis/{analysis_id}/insights/{id}/sources`. */
  sources_url: z.string().optional(),
});
export type InsightItem = z.infer<typeof InsightItem>;

export const ResultData = z.object({
  answer: z.string(),
  citations: z.array(
    z.object({ number: z.number().int(), content_id: z.string(), quote: z.string(), unavailable: UnavailableCitation.optional() }),
  ),
  insights: z.array(InsightItem),
  evidence: z.array(EvidenceItem),
  coverage: z.record(z.string(), z.object({ in_scope: z.number().int(), retrieved: z.number().int(), cited: z.number().int() })),
  limitations: z.array(z.string()),
  engine: z.enum(["extractive", "llm"]),
  scope: z.record(z.string(), z.unknown()),
  /** The knowledge record each insight was published as (null: not published), in order; [] without an entity or project. */
  knowledge_record_ids: z.array(z.string().nullable()).optional(),
});
export type ResultData = z.infer<typeof ResultData>;

export const AnalysisRecord = z.object({
  analysis_id: z.string(),
  status: z.enum(ANALYSIS_STATUSES),
  question: z.string(),
  search_mode: z.string().describe("The mode the analysis runs with: multi_source when the request named none"),
  platforms: z.array(z.string()),
  depth: z.string(),
  entity_id: z.string().nullable(),
  project_id: z.string().nullable(),
  request_id: z.string().nullable(),
  provided_sources: z.array(z.object({ content_id: z.string() })),
  result: z.object({ status: z.string(), data: ResultData }).nullable(),
  error: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
  finished_at: z.string().nullable(),
  events_url: z.string(),
});
export type AnalysisRecord = z.infer<typeof AnalysisRecord>;

export const STREAM_DESCRIPTION = [
  "A text/event-stream. Every event has `id:` (its sequence number, for Last-Event-ID), `event:` and one `data:` line of JSON",
  "that always includes `analysis_id`. Events: `progress` {step, status: running, progress 0..1}, `evidence` {number, content_id,",
  "quote, url, platform, author, published_at, ...}, then exactly one of `result` {status: completed|partial, data} or `error`",
  "{status: failed, detail}. `: ping` comments arrive every 10 s. The response carries `X-Analysis-Id`.",
].join(" ");
