import { entityTerms, htmlToText, objectiveTerms } from "./query.js";
import { bound, type CollectedComment, type CollectedSource, type Collector, type CollectorInput } from "./types.js";
import { mapLimited } from "./util.js";

/**
 * Hacker News through the Algolia HN Search API:
 * `GET /search?query&tags=story&page&hitsPerPage&numericFilters=created_at_i>…` answers
 * `{hits, nbHits, nbPages, page, hitsPerPage}`; the cursor is the page number. Comments
 * of a story come from `GET /items/{id}` (a nested tree), flattened depth-first with
 * the parent comment's id kept in the comment's metadata.
 */
interface AlgoliaHit {
  objectID: string;
  title?: string | null;
  url?: string | null;
  author?: string | null;
  created_at?: string | null;
  created_at_i?: number | null;
  points?: number | null;
  num_comments?: number | null;
  story_text?: string | null;
  comment_text?: string | null;
}

interface AlgoliaSearch {
  hits: AlgoliaHit[];
  nbHits?: number;
  nbPages: number;
  page: number;
  hitsPerPage?: number;
}

interface HnItem {
  id: number | string;
  author?: string | null;
  text?: string | null;
  created_at?: string | null;
  points?: number | null;
  parent_id?: number | string | null;
  children?: HnItem[];
}

const itemUrl = (id: string | number) => `https://news.ycombinator.com/item?id=${id}`;

function buildQuery(input: CollectorInput): { query: string; optional: string[] } {
  const terms = entityTerms(input);
  const name = terms[0] ?? input.entity.name;
  const optional = [...terms.slice(1).flatMap((t) => t.split(/\s+/)), ...objectiveTerms(input)];
  return { query: [name, ...optional].join(" "), optional };
}

function flattenComments(item: HnItem, limit: number): CollectedComment[] {
  const out: CollectedComment[] = [];
  const walk = (children: HnItem[] | undefined, parentId: string | null) => {
    for (const child of children ?? []) {
      if (out.length >= limit) return;
      const text = htmlToText(child.text);
      if (text) {
        out.push({
          id: bound.id(child.id),
          url: itemUrl(child.id),
          text: bound.comment(text),
          author: bound.author(child.author, "unknown"),
          published_at: bound.date(child.created_at),
          likes: bound.count(child.points),
          replies: child.children?.length ?? 0,
          metadata: { parent_external_id: parentId ?? String(item.id) },
        });
      }
      walk(child.children, String(child.id));
    }
  };
  walk(item.children, null);
  return out;
}

export const hackernews: Collector = {
  platform: "hackernews",
  blockedReason: () => null,
  describe: (input) => buildQuery(input).query,
  searchTarget: (input) => buildQuery(input).query,

  async fetchPage(input, cursor) {
    const page = cursor === null ? 0 : Number(cursor);
    const { query, optional } = buildQuery(input);
    const params = new URLSearchParams({
      query,
      tags: "story",
      page: String(page),
      hitsPerPage: String(input.pageSize),
      numericFilters: `created_at_i>=${Math.floor(input.since.getTime() / 1000)}`,
    });
    if (optional.length > 0) params.set("optionalWords", optional.join(" "));
    const base = input.config.HACKERNEWS_API_URL.replace(/\/+$/, "");
    const { body } = await input.http.getJson<AlgoliaSearch>(`${base}/search?${params}`);
    const hits = Array.isArray(body.hits) ? body.hits : [];

    const sources = await mapLimited(hits, 3, async (hit): Promise<CollectedSource> => {
      const title = hit.title ?? "";
      const text = htmlToText(hit.story_text ?? hit.comment_text);
      let comments: CollectedComment[] = [];
      if ((hit.num_comments ?? 0) > 0 && input.maxComments > 0) {
        const { body: item } = await input.http.getJson<HnItem>(`${base}/items/${encodeURIComponent(hit.objectID)}`);
        comments = flattenComments(item, input.maxComments);
      }
      return {
        id: bound.id(hit.objectID),
        title: bound.title(title),
        url: bound.url(hit.url || itemUrl(hit.objectID)),
        platform: "hackernews",
        content: bound.content(text || title || itemUrl(hit.objectID)),
        author: bound.author(hit.author),
        published_at: bound.date(hit.created_at ?? hit.created_at_i ?? null),
        engagement: { score: bound.count(hit.points), comments: bound.count(hit.num_comments) },
        metadata: { discussion_url: itemUrl(hit.objectID), ...(hit.url ? { link_url: hit.url } : {}) },
        comments,
      };
    });

    const last = body.page + 1 >= body.nbPages || hits.length === 0;
    const capped = last && typeof body.nbHits === "number" && body.nbHits > (body.page + 1) * input.pageSize;
    return {
      sources,
      next: last ? null : String(body.page + 1),
      ...(capped
        ? { partial: "bounded" as const, note: `the search API pages no deeper than ${body.nbPages} pages of ${body.nbHits} hits` }
        : {}),
    };
  },
};
