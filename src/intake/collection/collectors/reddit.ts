import { entityTerms, orQuery } from "./query.js";
import { bound, type CollectedComment, type CollectedSource, type Collector, type CollectorInput } from "./types.js";
import { mapLimited } from "./util.js";

/**
 * Reddit through its public JSON: `GET /search.json?q&sort=new&limit&after&raw_json=1`
 * answers a Listing `{data: {children: [{kind: "t3", data}], after}}`; the cursor is
 * `after`. Results come newest first, so the first post older than the window ends the
 * window (read to the end → `exhaustive`). Comments come from `GET /comments/{id}.json`
 * (`[postListing, commentListing]`, replies nested), flattened depth-first.
 */
interface Thing<T> {
  kind: string;
  data: T;
}
interface Listing<T> {
  kind?: string;
  data: { children: Thing<T>[]; after: string | null };
}
interface RedditPost {
  id: string;
  name?: string;
  title?: string;
  selftext?: string;
  url?: string;
  permalink?: string;
  author?: string;
  created_utc?: number;
  score?: number;
  num_comments?: number;
  subreddit?: string;
}
interface RedditComment {
  id: string;
  body?: string;
  author?: string;
  created_utc?: number;
  score?: number;
  permalink?: string;
  parent_id?: string;
  replies?: Listing<RedditComment> | "";
}

const WEB = "https://www.reddit.com";
const query = (input: CollectorInput) => orQuery(entityTerms(input));

function flattenComments(listing: Listing<RedditComment> | undefined, limit: number): CollectedComment[] {
  const out: CollectedComment[] = [];
  const walk = (l: Listing<RedditComment> | "" | undefined) => {
    if (!l || typeof l !== "object") return;
    for (const child of l.data?.children ?? []) {
      if (out.length >= limit) return;
      if (child.kind !== "t1") continue;
      const c = child.data;
      const text = c.body?.trim();
      if (text && text !== "[deleted]" && text !== "[removed]") {
        const replies = c.replies && typeof c.replies === "object" ? c.replies.data.children.filter((r) => r.kind === "t1").length : 0;
        out.push({
          id: bound.id(c.id),
          url: c.permalink ? bound.url(`${WEB}${c.permalink}`) : null,
          text: bound.comment(text),
          author: bound.author(c.author, "unknown"),
          published_at: bound.date(c.created_utc ?? null),
          likes: bound.count(c.score),
          replies,
          metadata: { parent_external_id: c.parent_id ?? null },
        });
      }
      walk(c.replies);
    }
  };
  walk(listing);
  return out;
}

export const reddit: Collector = {
  platform: "reddit",
  blockedReason: () => null,
  describe: query,
  searchTarget: query,

  async fetchPage(input, cursor) {
    const base = input.config.REDDIT_API_URL.replace(/\/+$/, "");
    const params = new URLSearchParams({ q: query(input), sort: "new", limit: String(input.pageSize), type: "link", raw_json: "1" });
    if (cursor) params.set("after", cursor);
    const { body } = await input.http.getJson<Listing<RedditPost>>(`${base}/search.json?${params}`);
    const children = (body.data?.children ?? []).filter((c) => c.kind === "t3");
    const sinceSeconds = input.since.getTime() / 1000;
    const inWindow = children.filter((c) => (c.data.created_utc ?? Number.POSITIVE_INFINITY) >= sinceSeconds);
    const leftWindow = inWindow.length < children.length;

    const sources = await mapLimited(inWindow, 3, async ({ data: post }): Promise<CollectedSource> => {
      let comments: CollectedComment[] = [];
      if ((post.num_comments ?? 0) > 0 && input.maxComments > 0) {
        const { body: thread } = await input.http.getJson<[Listing<RedditPost>, Listing<RedditComment>]>(
          `${base}/comments/${encodeURIComponent(post.id)}.json?limit=${input.maxComments}&sort=top&raw_json=1`,
        );
        comments = flattenComments(Array.isArray(thread) ? thread[1] : undefined, input.maxComments);
      }
      const permalink = post.permalink ? `${WEB}${post.permalink}` : "";
      const title = post.title ?? "";
      return {
        id: bound.id(post.id),
        title: bound.title(title),
        url: bound.url(permalink || post.url),
        platform: "reddit",
        content: bound.content(post.selftext?.trim() || title || permalink),
        author: bound.author(post.author),
        published_at: bound.date(post.created_utc ?? null),
        engagement: { score: bound.count(post.score), comments: bound.count(post.num_comments) },
        metadata: {
          subreddit: post.subreddit ?? null,
          fullname: post.name ?? `t3_${post.id}`,
          ...(post.url && post.url !== permalink ? { link_url: post.url } : {}),
        },
        comments,
      };
    });

    const after = body.data?.after ?? null;
    return { sources, next: leftWindow || !after || children.length === 0 ? null : after };
  },
};
