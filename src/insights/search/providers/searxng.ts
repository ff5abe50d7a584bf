import type { Response } from "undici";
import { AppError } from "../../../platform/errors.js";
import { parseRetryAfterSeconds, retryAfterHeader } from "../../../platform/http/retry-after.js";
import { outboundFetch, trustedEndpoint } from "../../../platform/outbound.js";
import type { ProviderRequest, SearchHit, SearchProvider } from "./types.js";

/**
 * A SearXNG instance's JSON API (`GET /search?q=…&format=json`, which the instance must
 * allow in its `search.formats`). Each result's platform is read from its URL's host.
 * Results with a known publication date before the floor are dropped; undated ones are
 * kept (SearXNG's own date filter is coarse: day, month, year).
 */
interface SearxResult {
  url?: unknown;
  title?: unknown;
  content?: unknown;
  publishedDate?: unknown;
  pubdate?: unknown;
}

const HOST_PLATFORMS: [RegExp, string][] = [
  [/(^|\.)reddit\.com$/, "reddit"],
  [/(^|\.)(twitter|x)\.com$/, "twitter"],
  [/(^|\.)github\.com$/, "github"],
  [/^news\.ycombinator\.com$/, "hackernews"],
  [/(^|\.)youtube\.com$|^youtu\.be$/, "youtube"],
  [/(^|\.)linkedin\.com$/, "linkedin"],
  [/(^|\.)tiktok\.com$/, "tiktok"],
  [/(^|\.)instagram\.com$/, "instagram"],
  [/(^|\.)producthunt\.com$/, "producthunt"],
  [/(^|\.)threads\.(net|com)$/, "threads"],
];

export function platformOfUrl(url: string): string {
  let host: string;
  try {
    host = new URL(url).hostname.toLowerCase();
  } catch {
    return "web";
  }
  return HOST_PLATFORMS.find(([re]) => re.test(host))?.[1] ?? "web";
}

function parseDate(value: unknown): Date | null {
  if (typeof value !== "string" || value.length === 0) return null;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? null : date;
}

export function searxngProvider(options: { baseUrl: string; timeoutMs: number }): SearchProvider {
  const name = "searxng";
  // The provider's own Retry-After is passed on; without one the error handler's default applies.
  const unavailable = (detail: string, cause?: unknown, retryAfter?: string | null) =>
    new AppError("upstream_unavailable", `The search provider '${name}' ${detail}.`, {
      cause,
      headers: retryAfterHeader(parseRetryAfterSeconds(retryAfter)),
    });
  const bad = (detail: string, cause?: unknown) => new AppError("upstream_error", `The search provider '${name}' ${detail}.`, { cause });

  const policy = trustedEndpoint(options.baseUrl);

  return {
    name,
    async search(request: ProviderRequest): Promise<SearchHit[]> {
      const url = new URL(`${options.baseUrl.replace(/\/$/, "")}/search`);
      url.searchParams.set("q", request.query);
      url.searchParams.set("format", "json");
      url.searchParams.set("pageno", "1");
      let res: Response;
      let body: unknown;
      try {
        res = await outboundFetch(url, { headers: { accept: "application/json" }, signal: AbortSignal.timeout(options.timeoutMs) }, policy);
        if (res.status === 429 || res.status === 503 || res.status === 504) {
          await res.body?.cancel();
          throw unavailable(`is overloaded or unavailable (HTTP ${res.status})`, undefined, res.headers.get("retry-after"));
        }
        if (!res.ok) {
          await res.body?.cancel();
          throw bad(`answered HTTP ${res.status}`);
        }
        body = await res.json().catch((err: unknown) => {
          if (err instanceof Error && (err.name === "TimeoutError" || err.name === "AbortError")) throw err;
          throw bad("answered with a body that is not JSON", err);
        });
      } catch (err) {
        if (err instanceof AppError) throw err;
        if (err instanceof Error && (err.name === "TimeoutError" || err.name === "AbortError")) {
          throw unavailable(`did not answer within ${options.timeoutMs} ms`, err);
        }
        throw unavailable("could not be reached", err);
      }
      const results = (body as { results?: unknown } | null)?.results;
      if (!Array.isArray(results)) throw bad("answered without a results list");

      const hits: SearchHit[] = [];
      for (const raw of results as SearxResult[]) {
        if (!raw || typeof raw.url !== "string" || !/^https?:\/\//i.test(raw.url)) continue;
        const platform = platformOfUrl(raw.url);
        if (request.platforms && !request.platforms.includes(platform)) continue;
        const publishedAt = parseDate(raw.publishedDate) ?? parseDate(raw.pubdate);
        if (request.dateFrom && publishedAt && publishedAt < request.dateFrom) continue;
        hits.push({
          title: typeof raw.title === "string" ? raw.title : "",
          url: raw.url,
          platform,
          snippet: typeof raw.content === "string" ? raw.content : "",
          contentId: null,
          publishedAt,
        });
        if (hits.length >= request.limit) break;
      }
      return hits;
    },
  };
}
