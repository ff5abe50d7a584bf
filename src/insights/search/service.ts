import type { Config } from "../../platform/config.js";
import type { Db } from "../../platform/db.js";
import { searxngProvider } from "./providers/searxng.js";
import { storedProvider } from "./providers/stored.js";
import type { SearchHit, SearchProvider } from "./providers/types.js";
import { PRIVATE_PLATFORMS, type SearchInput, type SearchResponse, type SearchResult } from "./schemas.js";

/**
 * Public-evidence search: every configured provider answers the query in parallel, and
 * the lists are merged by reciprocal rank fusion (k = 60), one result per URL (a stored
 * original wins over an external copy of the same page). Any provider failure fails the
 * whole search with its 502 or 503: a partial list would read as "nothing else exists".
 */
export const RRF_K = 60;

/** The providers a deployment has: the stored evidence always, SearXNG when configured. */
export function searchProviders(db: Db, config: Config): SearchProvider[] {
  const providers: SearchProvider[] = [storedProvider(db)];
  if (config.SEARXNG_URL) providers.push(searxngProvider({ baseUrl: config.SEARXNG_URL, timeoutMs: config.SEARCH_PROVIDER_TIMEOUT_MS }));
  return providers;
}

/** `news` reads as web pages and Hacker News; private platforms are dropped. */
export function expandPlatforms(platforms: readonly string[] | undefined): string[] | undefined {
  if (!platforms) return undefined;
  const out = new Set<string>();
  for (const p of platforms) {
    if (p === "news") {
      out.add("web");
      out.add("hackernews");
    } else if (!(PRIVATE_PLATFORMS as readonly string[]).includes(p)) out.add(p);
  }
  return [...out];
}

/** A URL reduced to what identifies the page: no fragment, no tracking parameters, no trailing slash. */
export function normaliseUrl(url: string): string {
  try {
    const u = new URL(url);
    u.hash = "";
    for (const key of [...u.searchParams.keys()]) if (/^utm_|^(fbclid|gclid|ref)$/i.test(key)) u.searchParams.delete(key);
    const path = u.pathname.replace(/\/+$/, "");
    return `${u.protocol}//${u.hostname.toLowerCase().replace(/^www\./, "")}${path}${u.search}`;
  } catch {
    return url.trim();
  }
}

export async function searchEvidence(providers: SearchProvider[], userId: string, input: SearchInput, reads?: Db): Promise<SearchResponse> {
  const platforms = expandPlatforms(input.platforms);
  if (platforms && platforms.length === 0) return { results: [], count: 0, query: input.query };

  const request = { userId, query: input.query, platforms, limit: input.limit, dateFrom: input.date_from, reads };
  const lists = await Promise.all(providers.map(async (p) => ({ name: p.name, hits: await p.search(request) })));

  const merged = new Map<string, { hit: SearchHit; score: number; source: string }>();
  lists.forEach(({ name, hits }) => {
    hits.forEach((hit, rank) => {
      const key = hit.contentId ? `content:${hit.contentId}` : normaliseUrl(hit.url);
      const urlKey = hit.url ? normaliseUrl(hit.url) : key;
      const existing = merged.get(key) ?? merged.get(urlKey);
      const gain = 1 / (RRF_K + rank + 1);
      if (existing) {
        existing.score += gain;
        return;
      }
      const entry = { hit, score: gain, source: name };
      merged.set(key, entry);
      if (hit.url) merged.set(urlKey, entry);
    });
  });

  const unique = [...new Set(merged.values())];
  unique.sort((a, b) => b.score - a.score || a.source.localeCompare(b.source) || a.hit.url.localeCompare(b.hit.url));
  const results: SearchResult[] = unique.slice(0, input.limit).map(({ hit, score, source }) => ({
    title: hit.title,
    url: hit.url,
    platform: hit.platform,
    snippet: hit.snippet,
    content_id: hit.contentId,
    published_at: hit.publishedAt ? hit.publishedAt.toISOString() : null,
    score: Math.round(score * 1e6) / 1e6,
    source,
  }));
  return { results, count: results.length, query: input.query };
}
