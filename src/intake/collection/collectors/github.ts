import { labelNames } from "../../../insights/enrichment/feedback-kind/labels.js";
import { entityTerms, orQuery } from "./query.js";
import { bound, type CollectedComment, type CollectedSource, type Collector, type CollectorInput } from "./types.js";
import { mapLimited } from "./util.js";

/**
 * GitHub issues and pull requests through the search API:
 * `GET /search/issues?q&sort=created&order=desc&per_page&page` answers
 * `{total_count, incomplete_results, items}`; the next page comes from the `Link`
 * header (`rel="next"`), else from the page arithmetic. The API serves at most 1000
 * results per query (deeper is `bounded`) and flags timed-out searches with
 * `incomplete_results` (`sampled`). An issue's label names are kept in its metadata. Comments come from
 * `GET /repos/{owner}/{repo}/issues/{number}/comments`. `GITHUB_TOKEN` is optional: it
 * raises the rate limit, which is otherwise honoured through `x-ratelimit-reset`.
 */
interface GithubUser {
  login?: string;
}
interface GithubLabel {
  name?: string;
}
interface GithubIssue {
  id: number;
  number: number;
  title?: string;
  body?: string | null;
  html_url?: string;
  repository_url?: string;
  user?: GithubUser | null;
  created_at?: string;
  comments?: number;
  state?: string;
  pull_request?: unknown;
  labels?: (GithubLabel | string)[];
  reactions?: { total_count?: number; "+1"?: number };
}
interface GithubSearch {
  total_count: number;
  incomplete_results: boolean;
  items: GithubIssue[];
}
interface GithubComment {
  id: number;
  body?: string | null;
  html_url?: string;
  user?: GithubUser | null;
  created_at?: string;
  reactions?: { total_count?: number };
}

const SEARCH_CAP = 1000;

function query(input: CollectorInput): string {
  const day = input.since.toISOString().slice(0, 10);
  return `${orQuery(entityTerms(input))} created:>=${day}`;
}

function headers(input: CollectorInput): Record<string, string> {
  return {
    accept: "application/vnd.github+json",
    "x-github-api-version": "2022-11-28",
    ...(input.config.GITHUB_TOKEN ? { authorization: `Bearer ${input.config.GITHUB_TOKEN}` } : {}),
  };
}

/** The page number of `rel="next"` in a Link header, if any. */
export function nextPageFromLink(link: string | null): string | null {
  if (!link) return null;
  for (const part of link.split(",")) {
    const match = /<([^>]+)>\s*;\s*rel="?next"?/.exec(part);
    if (match?.[1]) return new URL(match[1], "http://x").searchParams.get("page");
  }
  return null;
}

function repoPath(issue: GithubIssue): string | null {
  const fromApi = issue.repository_url ? /\/repos\/([^/]+\/[^/]+)\/?$/.exec(issue.repository_url)?.[1] : undefined;
  if (fromApi) return fromApi;
  const fromHtml = issue.html_url ? /github\.com\/([^/]+\/[^/]+)\/(issues|pull)\//.exec(issue.html_url)?.[1] : undefined;
  return fromHtml ?? null;
}

export const github: Collector = {
  platform: "github",
  blockedReason: () => null,
  describe: query,
  searchTarget: query,

  async fetchPage(input, cursor) {
    const page = cursor === null ? 1 : Number(cursor);
    const base = input.config.GITHUB_API_URL.replace(/\/+$/, "");
    const params = new URLSearchParams({
      q: query(input),
      sort: "created",
      order: "desc",
      per_page: String(input.pageSize),
      page: String(page),
    });
    const answer = await input.http.getJson<GithubSearch>(`${base}/search/issues?${params}`, headers(input));
    const body = answer.body;
    const items = Array.isArray(body.items) ? body.items : [];

    const sources = await mapLimited(items, 3, async (issue): Promise<CollectedSource> => {
      const repo = repoPath(issue);
      let comments: CollectedComment[] = [];
      if ((issue.comments ?? 0) > 0 && input.maxComments > 0 && repo) {
        const { body: list } = await input.http.getJson<GithubComment[]>(
          `${base}/repos/${repo}/issues/${issue.number}/comments?per_page=${Math.min(100, input.maxComments)}`,
          headers(input),
        );
        comments = (Array.isArray(list) ? list : [])
          .filter((c) => c.body?.trim())
          .slice(0, input.maxComments)
          .map((c) => ({
            id: bound.id(c.id),
            url: bound.url(c.html_url),
            text: bound.comment(c.body?.trim() ?? ""),
            author: bound.author(c.user?.login, "unknown"),
            published_at: bound.date(c.created_at),
            likes: bound.count(c.reactions?.total_count),
            replies: null,
            metadata: null,
          }));
      }
      const title = issue.title ?? "";
      return {
        id: bound.id(issue.id),
        title: bound.title(title),
        url: bound.url(issue.html_url),
        platform: "github",
        content: bound.content(issue.body?.trim() || title || issue.html_url || String(issue.id)),
        author: bound.author(issue.user?.login),
        published_at: bound.date(issue.created_at),
        engagement: { comments: bound.count(issue.comments), likes: bound.count(issue.reactions?.total_count) },
        metadata: {
          repository: repo,
          number: issue.number,
          state: issue.state ?? null,
          pull_request: Boolean(issue.pull_request),
          // The maintainers' triage (bug, enhancement, question …): enrichment takes a kind they name (feedback-kind/labels.ts).
          labels: labelNames(issue.labels).map((name) => name.slice(0, 100)),
        },
        comments,
      };
    });

    const reachable = Math.min(body.total_count ?? 0, SEARCH_CAP);
    // A Link header, when sent, is authoritative; without one, count pages.
    const link = answer.headers.get("link");
    const linked = nextPageFromLink(link);
    const more = items.length > 0 && (link ? linked !== null : page * input.pageSize < reachable);
    const next = more ? (linked ?? String(page + 1)) : null;
    if (body.incomplete_results) {
      return { sources, next, partial: "sampled", note: "the search API reported incomplete_results (it timed out)" };
    }
    if (next === null && (body.total_count ?? 0) > SEARCH_CAP) {
      return { sources, next, partial: "bounded", note: `the search API serves ${SEARCH_CAP} of ${body.total_count} results` };
    }
    return { sources, next };
  },
};
