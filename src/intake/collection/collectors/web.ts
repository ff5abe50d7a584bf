import { Readability } from "@mozilla/readability";
import { parseHTML } from "linkedom";
import { UpstreamError } from "./http.js";
import { bound, type Collector, type CollectorInput } from "./types.js";

/**
 * The web: fetches the entity's `url` and every http(s) URL found in its
 * `collection_targets` (any depth of that object), one URL per page, and keeps the
 * readable text of each (Mozilla Readability over a linkedom DOM; the body text when
 * Readability finds no article). A URL that cannot be read is recorded as a failed
 * coverage target and the next one is tried; the source is keyed by its URL. At most
 * max pages × page size URLs are read per job (more is `bounded`).
 */
const MAX_TARGETS = 100;

function collectUrls(value: unknown, out: Set<string>, depth = 0): void {
  if (out.size >= MAX_TARGETS || depth > 6 || value === null || value === undefined) return;
  if (typeof value === "string") {
    const trimmed = value.trim();
    if (/^https?:\/\/\S+$/i.test(trimmed)) {
      try {
        out.add(new URL(trimmed).toString());
      } catch {
        // not a URL after all
      }
    }
    return;
  }
  if (Array.isArray(value)) {
    for (const v of value) collectUrls(v, out, depth + 1);
    return;
  }
  if (typeof value === "object") for (const v of Object.values(value as Record<string, unknown>)) collectUrls(v, out, depth + 1);
}

export function webTargets(input: Pick<CollectorInput, "entity">): string[] {
  const out = new Set<string>();
  collectUrls(input.entity.url, out);
  collectUrls(input.entity.collectionTargets, out);
  return [...out];
}

const squash = (text: string) =>
  text
    .replace(/[ \t\f\v\u00a0]+/g, " ")
    .replace(/ *\n */g, "\n")
    .replace(/\n{3,}/g, "\n\n")
    .trim();

export function extractReadable(html: string, url: string) {
  const { document } = parseHTML(html);
  const fallbackTitle = document.querySelector("title")?.textContent?.trim() ?? "";
  const fallbackText = squash(document.body?.textContent ?? "");
  let article: ReturnType<Readability["parse"]> = null;
  try {
    // Readability changes the DOM it reads; the fallbacks above were taken first.
    article = new Readability(document as unknown as ConstructorParameters<typeof Readability>[0], { charThreshold: 100 }).parse();
  } catch {
    article = null;
  }
  const text = squash(article?.textContent ?? "");
  return {
    title: article?.title?.trim() || fallbackTitle,
    text: text || fallbackText,
    byline: article?.byline?.trim() || "",
    publishedTime: article?.publishedTime ?? null,
    siteName: article?.siteName ?? null,
    excerpt: article?.excerpt ?? null,
    url,
  };
}

export const web: Collector = {
  platform: "web",
  onePagePerItem: true,
  fetchesUserUrls: true,
  blockedReason: (input) => (webTargets(input).length === 0 ? "the entity has no url and no collection_targets URLs to fetch" : null),
  describe: (input) => webTargets(input).join(" ").slice(0, 5000),

  async fetchPage(input, cursor) {
    const targets = webTargets(input);
    const index = cursor === null ? 0 : Number(cursor);
    const url = targets[index];
    const next = index + 1 < targets.length ? String(index + 1) : null;
    if (url === undefined) return { sources: [], next: null };
    try {
      const answer = await input.http.getText(url, { accept: "text/html,application/xhtml+xml,text/plain;q=0.8" });
      const type = (answer.headers.get("content-type") ?? "text/html").toLowerCase();
      let extracted: ReturnType<typeof extractReadable>;
      if (type.includes("html")) extracted = extractReadable(answer.body, url);
      else if (type.startsWith("text/"))
        extracted = { title: "", text: squash(answer.body), byline: "", publishedTime: null, siteName: null, excerpt: null, url };
      else throw new UpstreamError(`unsupported content type ${type.split(";")[0]}`, "permanent");
      if (!extracted.text) throw new UpstreamError("the page has no readable text", "permanent");
      return {
        next,
        target: { target: url, target_type: "url", status: "fetched" },
        sources: [
          {
            id: null,
            title: bound.title(extracted.title),
            url: bound.url(url),
            platform: "web",
            content: bound.content(extracted.text),
            author: bound.author(extracted.byline),
            published_at: bound.date(extracted.publishedTime),
            engagement: {},
            metadata: {
              final_url: answer.url,
              content_type: type.split(";")[0],
              site_name: extracted.siteName,
              excerpt: extracted.excerpt,
            },
            comments: [],
          },
        ],
      };
    } catch (err) {
      if (!(err instanceof UpstreamError)) throw err;
      return { sources: [], next, target: { target: url, target_type: "url", status: "failed", error: err.message } };
    }
  },
};
