import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A local Hacker News search API (Algolia's format) for collection jobs, that can hold
 * its answers: while held, every search request for a page at or after `holdFrom`
 * waits (a job is "running" at the upstream for as long as the test wants);
 * `release()` answers them all. Each query has `pages` pages of `storiesPerPage` stories.
 */
export interface HackerNewsFake {
  /** The base URL to configure as HACKERNEWS_API_URL. */
  url: string;
  searches: number;
  /** Requests waiting for `release()`. */
  readonly held: number;
  hold: (fromPage?: number) => void;
  release: () => void;
  close: () => Promise<void>;
}

/** The collector settings that point collection jobs at a fake of `pages` pages of `perPage` stories, fast and without retries. */
export function hackerNewsCollector(hn: HackerNewsFake, perPage: number, pages: number): Record<string, string> {
  return {
    HACKERNEWS_API_URL: hn.url,
    COLLECTOR_ALLOW_PRIVATE_URLS: "true",
    COLLECTOR_RETRIES: "0",
    COLLECTOR_MAX_PAGES: String(pages),
    COLLECTOR_PAGE_SIZE: String(perPage),
    COLLECTOR_REQUESTS_PER_SECOND: "1000",
  };
}

export async function startHackerNews(storiesPerPage: number, pages = 1): Promise<HackerNewsFake> {
  let holding = false;
  let holdFrom = 0;
  let waiting: (() => void)[] = [];
  const state = { searches: 0 };
  const answer = (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? "/", "http://x");
    if (url.pathname !== "/api/v1/search") {
      res.writeHead(404, { "content-type": "application/json" });
      res.end('{"message":"Not Found"}');
      return;
    }
    const query = url.searchParams.get("query") ?? "";
    const page = Number(url.searchParams.get("page") ?? 0);
    const slug = query.replace(/[^A-Za-z0-9]+/g, "-").slice(0, 40);
    const hits = Array.from({ length: page < pages ? storiesPerPage : 0 }, (_, n) => {
      const i = page * storiesPerPage + n;
      const at = new Date(Date.now() - (i + 1) * 3_600_000);
      return {
        objectID: `${slug}-${i}`,
        title: `Story ${i} about ${query}`,
        url: `https://news.example.com/${slug}/${i}`,
        author: `hn-${i}`,
        created_at: at.toISOString(),
        created_at_i: Math.floor(at.getTime() / 1000),
        points: 10 + i,
        num_comments: 0,
        story_text: `Story ${i} text: the pricing of ${query} is confusing but support is quick.`,
      };
    });
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ hits, nbHits: storiesPerPage * pages, page, nbPages: pages, hitsPerPage: storiesPerPage, query }));
  };
  const server = createServer((req, res) => {
    req.resume();
    state.searches++;
    const page = Number(new URL(req.url ?? "/", "http://x").searchParams.get("page") ?? 0);
    if (holding && page >= holdFrom) waiting.push(() => answer(req, res));
    else answer(req, res);
  });
  server.keepAliveTimeout = 1;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1`,
    get searches() {
      return state.searches;
    },
    get held() {
      return waiting.length;
    },
    hold: (fromPage = 0) => {
      holding = true;
      holdFrom = fromPage;
    },
    release: () => {
      holding = false;
      const pending = waiting;
      waiting = [];
      for (const go of pending) go();
    },
    close: () =>
      new Promise<void>((resolve) => {
        holding = false;
        for (const go of waiting.splice(0)) go();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
