import type { Config } from "../../../platform/config.js";
import { isStorableInstant } from "../../../platform/dates.js";
import { linkOrEmpty } from "../../../platform/links.js";
import { clipCodePoints, codePointLength } from "../../../platform/text.js";
import type { HttpClient } from "./http.js";

/**
 * Collectors are HTTP clients with parsers: given a query and a cursor they fetch one
 * page from an upstream and map it to ingest source items. They never store anything;
 * the runner stores each page through the ingest service, keeps the cursor in the job
 * row (so a killed job resumes where it stopped) and records coverage at the end.
 *
 * Glossary:
 * - page: one upstream answer (one search page; for the web collector, one URL).
 * - cursor: what fetches the next page (a page number, reddit's `after`, a URL index).
 * - window: the period a search covers (`since` .. now); reading every page of the
 *   window is what makes coverage `exhaustive`.
 */
export const COLLECTOR_PLATFORMS = ["hackernews", "reddit", "github", "web"] as const;
export type CollectorPlatform = (typeof COLLECTOR_PLATFORMS)[number];

/** A comment as the ingest service accepts it. */
export interface CollectedComment {
  id: string | null;
  url?: string | null;
  text: string;
  author: string;
  published_at: string | null;
  likes: number | null;
  replies: number | null;
  metadata: Record<string, unknown> | null;
}

/** A source item as the ingest service accepts it. */
export interface CollectedSource {
  id: string | null;
  title: string;
  url: string;
  platform: CollectorPlatform;
  content: string;
  author: string;
  published_at: string | null;
  engagement: { likes?: number | null; comments?: number | null; views?: number | null; score?: number | null; shares?: number | null };
  metadata: Record<string, unknown> | null;
  comments: CollectedComment[];
}

/** One coverage target a page reports on (the web collector reports one per URL). */
export interface PageTarget {
  target: string;
  target_type: string;
  status: string;
  error?: string;
}

export interface CollectedPage {
  sources: CollectedSource[];
  /** Cursor of the next page; null when the upstream was read to the end of the window. */
  next: string | null;
  /**
   * Set on the last page when the upstream's end is not the window's end: `bounded` when
   * the upstream caps how deep one may page, `sampled` when it says its own answer is
   * incomplete (GitHub's `incomplete_results`). `note` says which.
   */
  partial?: "bounded" | "sampled";
  note?: string;
  target?: PageTarget;
}

export interface CollectorEntity {
  id: string;
  name: string;
  url: string;
  keywords: string[];
  collectionTargets: unknown;
}

export interface CollectorInput {
  entity: CollectorEntity;
  objective: string;
  questions: string[];
  depth: "brief" | "deep";
  /** Start of the search window. */
  since: Date;
  pageSize: number;
  maxComments: number;
  config: Config;
  http: HttpClient;
}

export interface Collector {
  platform: CollectorPlatform;
  /**
   * True when a page is one item (the web collector reads one URL per page): its page
   * limit is then the item budget of a search, max pages × page size.
   */
  onePagePerItem?: boolean;
  /**
   * True when the collector fetches URLs that users supplied (the web collector): those
   * may not resolve to private or loopback addresses unless COLLECTOR_ALLOW_PRIVATE_URLS
   * is set. API base URLs come from the operator's configuration and are trusted.
   */
  fetchesUserUrls?: boolean;
  /** Why this deployment cannot collect from the platform for this entity, or null. */
  blockedReason(input: CollectorInput): string | null;
  /** The query (or target list) recorded in the coverage record. */
  describe(input: CollectorInput): string;
  /** The coverage target of a search (web pages report their own targets). */
  searchTarget?: (input: CollectorInput) => string;
  fetchPage(input: CollectorInput, cursor: string | null): Promise<CollectedPage>;
}

const clip = clipCodePoints;

/** Bounds of the ingest request (spec §Limits), applied so a long upstream item never fails a batch. */
export const bound = {
  id: (s: string | number | null | undefined) => (s === null || s === undefined || s === "" ? null : clip(String(s), 500)),
  title: (s: string | null | undefined) => clip(s ?? "", 2000),
  url: (s: string | null | undefined) => (s && codePointLength(s) <= 5000 ? linkOrEmpty(s) : ""),
  author: (s: string | null | undefined, fallback = "") => clip(s || fallback, 500),
  content: (s: string) => clip(s, 500_000),
  comment: (s: string) => clip(s, 50_000),
  count: (n: unknown) => (typeof n === "number" && Number.isFinite(n) && n >= 0 ? Math.floor(n) : null),
  date: (v: string | number | null | undefined) => {
    if (v === null || v === undefined || v === "") return null;
    const d = typeof v === "number" ? new Date(v * 1000) : new Date(v);
    // A date the ingest would refuse drops the date, not the item.
    return isStorableInstant(d) ? d.toISOString() : null;
  },
};
