import type { Db } from "../../../platform/db.js";

/**
 * A search provider answers one query with hits in its own best-first order. Providers
 * throw AppError `upstream_error` (502: answered badly) or `upstream_unavailable` (503:
 * unreachable, timed out, overloaded); the search service never turns a failure into an
 * empty success.
 */
export interface ProviderRequest {
  userId: string;
  query: string;
  /** Concrete platforms to keep (news already expanded); undefined means all public ones. */
  platforms: string[] | undefined;
  limit: number;
  dateFrom: Date | undefined;
  /** The handle for this caller's stale-tolerant reads (a replica, or the primary); providers that read the database use it. */
  reads?: Db;
}

export interface SearchHit {
  title: string;
  url: string;
  platform: string;
  snippet: string;
  contentId: string | null;
  publishedAt: Date | null;
}

export interface SearchProvider {
  readonly name: string;
  search(request: ProviderRequest): Promise<SearchHit[]>;
}
