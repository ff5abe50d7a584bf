import { z } from "zod";
import { isoDateTime } from "../../platform/dates.js";
import { optional, withDefault } from "../../platform/validation.js";
import { PLATFORMS } from "../../platform/vocabulary.js";

/**
 * `POST /agent/v1/search`: discovers source-backed public evidence without synthesis.
 * `platforms` takes the Platform values plus `news` (read as web and hackernews);
 * meeting notes and slack are never public evidence, so asking for them finds nothing.
 */
export const SEARCH_PLATFORMS = [...PLATFORMS, "news"] as const;
export const SEARCH_LIMIT_DEFAULT = 20;
/** Platforms whose rows are private to the workspace and never searched. */
export const PRIVATE_PLATFORMS = ["meetingnotes", "slack"] as const;

/** An ISO 8601 date (`2026-01-31`, read as the start of that day in UTC) or datetime. */
const DateFloor = isoDateTime();

export const SearchBody = z.object({
  query: z.string().min(1).max(2000),
  platforms: optional(z.array(z.enum(SEARCH_PLATFORMS)).max(SEARCH_PLATFORMS.length * 2)),
  limit: withDefault(z.number().int().min(1).max(200), SEARCH_LIMIT_DEFAULT),
  date_from: optional(DateFloor),
});
export type SearchInput = z.output<typeof SearchBody>;

export const SearchResult = z.object({
  title: z.string(),
  url: z.string(),
  platform: z.string(),
  snippet: z.string(),
  /** The stored original, when the result is one; null for external results. */
  content_id: z.string().nullable(),
  published_at: z.string().nullable(),
  /** Reciprocal-rank-fusion score across the providers that answered; higher is better. */
  score: z.number(),
  /** Which provider found it: `stored` (this service's evidence store) or an external one. */
  source: z.string(),
});
export type SearchResult = z.infer<typeof SearchResult>;

export const SearchResponse = z.object({
  results: z.array(SearchResult),
  count: z.number().int(),
  query: z.string(),
});
export type SearchResponse = z.infer<typeof SearchResponse>;
