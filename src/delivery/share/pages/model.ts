import type { AnalysisRecord, InsightItem } from "../../../insights/analysis/schemas.js";
import type { SourceSort, ThemeSourcesPage } from "../../../insights/analysis/theme-sources-schemas.js";
import type { IntelligenceSummary } from "../../../insights/intelligence/schemas.js";
import type { InsightRecord, ResolvedEvidence, SourceSummary } from "../../../insights/knowledge/schemas.js";

/**
 * What each shared page shows, loaded by src/delivery/share/views.ts and rendered by the pure functions of
 * this folder (no database, no HTTP): a page is a function of its model.
 */

/** What every page knows about the link that opened it. */
export interface LinkFrame {
  /** When the link stops opening the page (ISO 8601). */
  expiresAt: string;
  /** When the page was rendered (ISO 8601). */
  renderedAt: string;
}

export interface AnalysisPageModel {
  frame: LinkFrame;
  analysis: AnalysisRecord;
  /** The entity or project the analysis is about, by name, when it names one. */
  subject: string | null;
  /** While the analysis is queued or running: the path of its shared event stream (`/share/{token}/events`). */
  eventsPath: string | null;
  /** The path of the page itself (`/share/{token}`): each insight links to `{path}/insights/{id}`, the page of its sources. */
  sharePath?: string | null;
}

/** One insight's sources, a page at a time (`/share/{token}/insights/{n}`). */
export interface ThemeSourcesPageModel {
  frame: LinkFrame;
  /** The analysis's question and the entity or project it is about. */
  question: string;
  subject: string | null;
  insight: InsightItem;
  /** The insight's number (its id). */
  n: number;
  /** The shared analysis's page (`/share/{token}`). */
  sharePath: string;
  sources: ThemeSourcesPage;
  /** The cursor that opened this page, if not the first; its sort. */
  cursor: string | null;
  sort: SourceSort;
}

/** A cited quote of a knowledge record with its source and the captured text around it. */
export interface KnowledgeCitation extends ResolvedEvidence {
  source: SourceSummary | null;
  /** The snapshot text around the quote (a few hundred characters each side); null when the source is unavailable. */
  context: { before: string; quote: string; after: string } | null;
}

export interface KnowledgeRevisionSummary {
  revision: number;
  title: string;
  summary: string;
  origin: string;
  review_state: string;
  evidence_count: number;
  created_at: string;
}

export interface KnowledgePageModel {
  frame: LinkFrame;
  record: InsightRecord;
  /** The entity or project the record belongs to, by name. */
  subject: string | null;
  citations: KnowledgeCitation[];
  /** Every revision, newest first (the current one included). */
  history: KnowledgeRevisionSummary[];
}

/** Stored originals per bucket of publication time (storage time when unpublished). */
export interface VolumePoint {
  /** Start of the bucket, YYYY-MM-DD. */
  start: string;
  sources: number;
  comments: number;
}

export interface EntityJobSummary {
  id: string;
  status: string;
  platforms: string[];
  created_at: string;
  finished_at: string | null;
}

export interface EntityAnalysisSummary {
  id: string;
  question: string;
  status: string;
  created_at: string;
  finished_at: string | null;
}

export interface EntityPageModel {
  frame: LinkFrame;
  summary: IntelligenceSummary;
  /** Oldest first, evenly spaced buckets covering the current and previous windows. */
  volume: { bucket: "day" | "week"; points: VolumePoint[] };
  /** Newest first, at most 10 each. */
  jobs: EntityJobSummary[];
  analyses: EntityAnalysisSummary[];
}
