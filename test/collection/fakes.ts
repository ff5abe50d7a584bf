import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * Local stand-ins for the collectors' upstreams, answering in each real API's format:
 * Algolia HN search, reddit's public JSON, GitHub's search API, and plain web pages.
 * Every request is recorded; `intercept` lets a test answer a request differently
 * (a rate-limit answer, an error, or holding the answer until the test releases it).
 */
export interface Recorded {
  path: string;
  query: URLSearchParams;
  headers: IncomingMessage["headers"];
  at: number;
}

export interface Reply {
  status: number;
  headers?: Record<string, string>;
  body: unknown;
}

export type Interceptor = (req: Recorded) => Reply | undefined | Promise<Reply | undefined>;

export interface Fake {
  url: string;
  requests: Recorded[];
  intercept: (fn: Interceptor) => void;
  close: () => Promise<void>;
}

export async function startFake(route: (req: Recorded, base: string) => Reply): Promise<Fake> {
  const requests: Recorded[] = [];
  const interceptors: Interceptor[] = [];
  let base = "";
  const server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? "/", base);
    const recorded: Recorded = { path: url.pathname, query: url.searchParams, headers: req.headers, at: Date.now() };
    requests.push(recorded);
    let reply: Reply | undefined;
    for (const fn of interceptors) {
      reply = await fn(recorded);
      if (reply) break;
    }
    reply ??= route(recorded, base);
    const isText = typeof reply.body === "string";
    res.writeHead(reply.status, {
      "content-type": isText ? "text/html; charset=utf-8" : "application/json",
      ...(reply.headers ?? {}),
    });
    res.end(isText ? (reply.body as string) : JSON.stringify(reply.body));
  });
  server.keepAliveTimeout = 1;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: base,
    requests,
    intercept: (fn) => interceptors.push(fn),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const notFound: Reply = { status: 404, body: { message: "Not Found" } };
const daysAgo = (d: number) => new Date(Date.now() - d * 86_400_000);

// ---------------------------------------------------------------- Hacker News (Algolia)

export interface HnStory {
  objectID: string;
  title: string;
  url: string | null;
  author: string;
  created_at: string;
  created_at_i: number;
  points: number;
  num_comments: number;
  story_text: string | null;
  comments: { id: number; author: string; text: string; children?: { id: number; author: string; text: string }[] }[];
}

export function hnStories(n: number, prefix = "hn"): HnStory[] {
  return Array.from({ length: n }, (_, i) => {
    const at = daysAgo(1 + i);
    const id = `${prefix}${1000 + i}`;
    const withComments = i % 2 === 0;
    return {
      objectID: id,
      title: `Show HN: Acme story ${i}`,
      url: i % 3 === 0 ? null : `https://blog.example.com/acme-${i}`,
      author: `hnuser${i}`,
      created_at: at.toISOString(),
      created_at_i: Math.floor(at.getTime() / 1000),
      points: 10 + i,
      num_comments: withComments ? 2 : 0,
      story_text: i % 3 === 0 ? `<p>Acme story ${i} text.</p><p>Pricing is &quot;confusing&quot;.</p>` : null,
      comments: withComments
        ? [
            {
              id: 5000 + i * 10,
              author: `c${i}`,
              text: `<p>Top comment on ${i}</p>`,
              children: [{ id: 5001 + i * 10, author: `r${i}`, text: `Reply on ${i}` }],
            },
          ]
        : [],
    };
  });
}

/** `pick` chooses the dataset for a search query (so one fake serves several entities). */
export type PickData<T> = (query: string) => T[];
const allStories: HnStory[] = [];

export function hackernewsFake(pick: PickData<HnStory>): Promise<Fake> {
  return startFake((req) => {
    if (req.path === "/api/v1/search") {
      const stories = pick(req.query.get("query") ?? "");
      allStories.push(...stories.filter((s) => !allStories.includes(s)));
      const page = Number(req.query.get("page") ?? 0);
      const per = Number(req.query.get("hitsPerPage") ?? 20);
      const nbPages = Math.ceil(stories.length / per);
      const hits = stories.slice(page * per, (page + 1) * per).map(({ comments: _c, ...hit }) => hit);
      return { status: 200, body: { hits, nbHits: stories.length, page, nbPages, hitsPerPage: per, query: req.query.get("query") } };
    }
    const item = /^\/api\/v1\/items\/(.+)$/.exec(req.path);
    if (item) {
      const story = allStories.find((s) => s.objectID === item[1]);
      if (!story) return notFound;
      const toChild = (c: { id: number; author: string; text: string; children?: unknown[] }, parent: number | string): unknown => ({
        id: c.id,
        author: c.author,
        text: c.text,
        created_at: story.created_at,
        points: null,
        parent_id: parent,
        children: ((c.children ?? []) as { id: number; author: string; text: string }[]).map((cc) => toChild(cc, c.id)),
      });
      return {
        status: 200,
        body: {
          id: story.objectID,
          title: story.title,
          author: story.author,
          children: story.comments.map((c) => toChild(c, story.objectID)),
        },
      };
    }
    return notFound;
  });
}

// ---------------------------------------------------------------- reddit

export interface RedditPost {
  id: string;
  title: string;
  selftext: string;
  author: string;
  created_utc: number;
  score: number;
  num_comments: number;
  comments: { id: string; body: string; author: string; replies?: { id: string; body: string; author: string }[] }[];
}

export function redditPosts(n: number, options: { oldFrom?: number; prefix?: string } = {}): RedditPost[] {
  const prefix = options.prefix ?? "rp";
  return Array.from({ length: n }, (_, i) => ({
    id: `${prefix}${i}`,
    title: `Acme thoughts ${i}`,
    selftext: i % 2 === 0 ? `Acme post body ${i}: setup took an hour.` : "",
    author: `redditor${i}`,
    // Newest first; from `oldFrom` on, the posts are older than any search window.
    created_utc: Math.floor(daysAgo(options.oldFrom !== undefined && i >= options.oldFrom ? 2000 + i : 1 + i).getTime() / 1000),
    score: 5 + i,
    num_comments: i % 2 === 0 ? 2 : 0,
    comments:
      i % 2 === 0
        ? [
            {
              id: `${prefix}c${i}a`,
              body: `Comment on ${i}`,
              author: `u${i}`,
              replies: [{ id: `${prefix}c${i}b`, body: `Reply on ${i}`, author: `v${i}` }],
            },
          ]
        : [],
  }));
}

const allPosts: RedditPost[] = [];

export function redditFake(pick: PickData<RedditPost>): Promise<Fake> {
  const thing = (p: RedditPost) => ({
    kind: "t3",
    data: {
      id: p.id,
      name: `t3_${p.id}`,
      title: p.title,
      selftext: p.selftext,
      url: `https://www.reddit.com/r/acme/comments/${p.id}/x/`,
      permalink: `/r/acme/comments/${p.id}/x/`,
      author: p.author,
      created_utc: p.created_utc,
      score: p.score,
      num_comments: p.num_comments,
      subreddit: "acme",
    },
  });
  return startFake((req) => {
    if (req.path === "/search.json") {
      const posts = pick(req.query.get("q") ?? "");
      allPosts.push(...posts.filter((p) => !allPosts.includes(p)));
      const limit = Number(req.query.get("limit") ?? 25);
      const after = req.query.get("after");
      const start = after ? posts.findIndex((p) => `t3_${p.id}` === after) + 1 : 0;
      const slice = posts.slice(start, start + limit);
      const more = start + limit < posts.length;
      return {
        status: 200,
        body: {
          kind: "Listing",
          data: { after: more ? `t3_${slice.at(-1)?.id}` : null, before: null, dist: slice.length, children: slice.map(thing) },
        },
      };
    }
    const thread = /^\/comments\/([^/]+)\.json$/.exec(req.path);
    if (thread) {
      const post = allPosts.find((p) => p.id === thread[1]);
      if (!post) return notFound;
      const t1 = (
        c: { id: string; body: string; author: string; replies?: { id: string; body: string; author: string }[] },
        parent: string,
      ): unknown => ({
        kind: "t1",
        data: {
          id: c.id,
          name: `t1_${c.id}`,
          body: c.body,
          author: c.author,
          created_utc: post.created_utc + 60,
          score: 3,
          parent_id: parent,
          permalink: `/r/acme/comments/${post.id}/x/${c.id}/`,
          replies: c.replies?.length ? { kind: "Listing", data: { after: null, children: c.replies.map((r) => t1(r, `t1_${c.id}`)) } } : "",
        },
      });
      return {
        status: 200,
        body: [
          { kind: "Listing", data: { after: null, children: [thing(post)] } },
          {
            kind: "Listing",
            data: {
              after: null,
              children: [...post.comments.map((c) => t1(c, `t3_${post.id}`)), { kind: "more", data: { count: 0, children: [] } }],
            },
          },
        ],
      };
    }
    return notFound;
  });
}

// ---------------------------------------------------------------- GitHub

export function githubIssues(n: number, offset = 0) {
  return Array.from({ length: n }, (_, i) => ({
    id: 90000 + offset + i,
    number: offset + i + 1,
    title: `Acme SDK issue ${i}`,
    body: i % 2 === 0 ? `Steps to reproduce ${i}` : null,
    html_url: `https://github.com/acme/sdk/issues/${offset + i + 1}`,
    repository_url: "https://api.github.com/repos/acme/sdk",
    user: { login: `gh${i}` },
    created_at: daysAgo(1 + i).toISOString(),
    comments: i % 2 === 0 ? 1 : 0,
    state: "open",
    // As the API gives them: label objects, the kind among areas and triage states.
    labels: [
      [
        { id: 1, name: "area: auth", color: "fbca04" },
        { id: 2, name: "type: bug", color: "d73a4a" },
      ],
      [{ id: 3, name: "enhancement", color: "a2eeef" }],
      [{ id: 4, name: "help wanted", color: "008672" }],
    ][i % 3]!,
    reactions: { total_count: i },
  }));
}

type GithubIssue = ReturnType<typeof githubIssues>[number];
const allIssues: GithubIssue[] = [];

export function githubFake(pick: PickData<GithubIssue>): Promise<Fake> {
  return startFake((req, base) => {
    if (req.path === "/search/issues") {
      const issues = pick(req.query.get("q") ?? "");
      allIssues.push(...issues.filter((i) => !allIssues.includes(i)));
      const page = Number(req.query.get("page") ?? 1);
      const per = Number(req.query.get("per_page") ?? 30);
      const last = Math.max(1, Math.ceil(issues.length / per));
      const link = (p: number, rel: string) => {
        const q = new URLSearchParams(req.query);
        q.set("page", String(p));
        return `<${base}/search/issues?${q}>; rel="${rel}"`;
      };
      const links = [
        ...(page < last ? [link(page + 1, "next"), link(last, "last")] : []),
        ...(page > 1 ? [link(1, "first"), link(page - 1, "prev")] : []),
      ];
      return {
        status: 200,
        headers: links.length ? { link: links.join(", ") } : {},
        body: { total_count: issues.length, incomplete_results: false, items: issues.slice((page - 1) * per, page * per) },
      };
    }
    const comments = /^\/repos\/acme\/sdk\/issues\/(\d+)\/comments$/.exec(req.path);
    if (comments) {
      const issue = allIssues.find((i) => i.number === Number(comments[1]));
      if (!issue) return notFound;
      return {
        status: 200,
        body: Array.from({ length: issue.comments }, (_, k) => ({
          id: 70000 + issue.number * 10 + k,
          body: `Comment ${k} on issue ${issue.number}`,
          html_url: `${issue.html_url}#issuecomment-${k}`,
          user: { login: `commenter${k}` },
          created_at: issue.created_at,
          reactions: { total_count: 1 },
        })),
      };
    }
    return notFound;
  });
}

// ---------------------------------------------------------------- web pages

export function articleHtml(title: string, paragraphs: string[]): string {
  return `<!doctype html><html><head><title>${title}</title><meta name="author" content="Ada Writer"></head><body>
<nav><a href="/">Home</a> | <a href="/about">About</a></nav>
<article><h1>${title}</h1>${paragraphs.map((p) => `<p>${p}</p>`).join("\n")}</article>
<footer>Copyright Acme</footer></body></html>`;
}

export function webFake(pages: Record<string, string>): Promise<Fake> {
  return startFake((req) => {
    const page = pages[req.path];
    return page === undefined ? { status: 404, body: "<html><body>Not found</body></html>" } : { status: 200, body: page };
  });
}
