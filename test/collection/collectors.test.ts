import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { collectionProcessor } from "../../src/intake/collection/runner.js";
import { createHarness, type Harness } from "../helpers/harness.js";
import {
  articleHtml,
  type Fake,
  githubFake,
  githubIssues,
  type HnStory,
  hackernewsFake,
  hnStories,
  type RedditPost,
  redditFake,
  redditPosts,
  webFake,
} from "./fakes.js";
import { contentRows, coverageOf, createJob, newEntity, pollJob } from "./support.js";

/**
 * Every collector against a local server answering in its real API's format, run by the
 * real worker through the real ingest and coverage services.
 */
const hn: Record<string, HnStory[]> = {
  Hnexact: hnStories(8, "x"),
  Hnflaky: hnStories(3, "f"),
  Hnretry: hnStories(2, "t"),
  Refused: hnStories(2, "r"),
  Onlyco: hnStories(1, "o"),
  Bothlimited: hnStories(2, "l"),
};
const rd: Record<string, RedditPost[]> = {
  Rdbounded: redditPosts(12, { prefix: "b" }),
  Rdwindow: redditPosts(8, { prefix: "w", oldFrom: 3 }),
  Bothlimited: redditPosts(2, { prefix: "l" }),
};
const gh: Record<string, ReturnType<typeof githubIssues>> = { Ghlimited: githubIssues(7) };
const pickBy =
  <T>(data: Record<string, T[]>) =>
  (q: string) =>
    Object.entries(data).find(([name]) => q.includes(name))?.[1] ?? [];

let h: Harness;
let token: string;
let fakes: { hn: Fake; reddit: Fake; github: Fake; web: Fake };

beforeAll(async () => {
  fakes = {
    hn: await hackernewsFake(pickBy(hn)),
    reddit: await redditFake(pickBy(rd)),
    github: await githubFake(pickBy(gh)),
    web: await webFake({
      "/": articleHtml("Webco: the product", [
        "Webco helps small teams ship invoices without spreadsheets. ".repeat(5),
        "Customers say the setup takes ten minutes and the exports are reliable. ".repeat(5),
      ]),
      "/pricing": articleHtml("Webco pricing", ["The starter plan costs nine dollars per seat per month, billed yearly. ".repeat(6)]),
    }),
  };
  h = await createHarness({
    HACKERNEWS_API_URL: `${fakes.hn.url}/api/v1`,
    REDDIT_API_URL: fakes.reddit.url,
    GITHUB_API_URL: fakes.github.url,
    COLLECTOR_PAGE_SIZE: "5",
    COLLECTOR_MAX_PAGES: "2",
    COLLECTOR_REQUESTS_PER_SECOND: "1000",
    COLLECTOR_RETRIES: "2",
    COLLECTOR_TIMEOUT_MS: "3000",
    COLLECTOR_ALLOW_PRIVATE_URLS: "true",
  });
  token = await h.token();
  h.startWorkers({ "collection.run.v1": collectionProcessor() });
});
afterAll(async () => {
  await h?.close();
  await Promise.all(Object.values(fakes ?? {}).map((f) => f.close()));
});

async function runJob(name: string, body: Record<string, unknown>, entityExtra: Record<string, unknown> = {}) {
  const entity = await newEntity(h, token, { name, ...entityExtra });
  const created = await createJob(h, token, {
    entity_id: entity.id,
    objective: `What do people say about ${name}?`,
    collection_only: true,
    ...body,
  });
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  const status = await pollJob(h, token, created.body.job_id);
  return { entity, jobId: created.body.job_id as string, status };
}

const searches = (fake: Fake, path: string, term: string) =>
  fake.requests.filter((r) => r.path === path && [...r.query.values()].some((v) => v.includes(term)));

describe("hackernews collector (Algolia HN search)", () => {
  it("pages to the end of the window, stores stories and nested comments with parent links, records exhaustive", async () => {
    const { entity, jobId, status } = await runJob("Hnexact", { platforms: ["hackernews"] });
    expect(status.status).toBe("completed");

    const calls = searches(fakes.hn, "/api/v1/search", "Hnexact");
    expect(calls.map((c) => c.query.get("page"))).toEqual(["0", "1"]);
    expect(calls[0]?.query.get("tags")).toBe("story");
    expect(calls[0]?.query.get("hitsPerPage")).toBe("5");
    expect(calls[0]?.query.get("numericFilters")).toMatch(/^created_at_i>=\d+$/);

    const rows = await contentRows(h, entity.id, "hackernews");
    const sources = rows.filter((r) => r.kind === "source");
    const comments = rows.filter((r) => r.kind === "comment");
    expect(sources).toHaveLength(8);
    expect(comments).toHaveLength(8);
    for (const c of comments) {
      const parent = sources.find((s) => s.id === c.parentId);
      expect(parent, `comment ${c.externalId} has a parent`).toBeDefined();
      expect(c.content).toContain(`on ${parent?.title.replace("Show HN: Acme story ", "")}`);
    }
    const reply = comments.find((c) => c.externalId === "5001");
    expect(reply?.metadata).toMatchObject({ parent_external_id: "5000" });
    expect(sources.find((s) => s.externalId === "x1000")?.content).toBe('Acme story 0 text.\n\nPricing is "confusing".');
    expect(rows.every((r) => r.collectionRunId === jobId)).toBe(true);

    expect(status.progress.hackernews).toMatchObject({
      status: "completed",
      coverage_state: "exhaustive",
      pages: 2,
      found: 16,
      stored: 16,
      inserted: 16,
    });
    expect(status.coverage).toEqual({ hackernews: "exhaustive" });
    const coverage = await coverageOf(h, entity.id, jobId);
    expect(coverage.hackernews).toMatchObject({ coverageState: "exhaustive", collectionScope: "collection_job:brief:last_90_days" });
    expect(coverage.hackernews?.totals).toMatchObject({ found: 16, stored: 16, pages: 2 });
    expect(coverage.hackernews?.targets[0]).toMatchObject({
      targetType: "search_query",
      reachedEnd: true,
      itemsFound: 16,
      itemsStored: 16,
    });
  });

  it("retries an error answer inside the run and still reads to the end", async () => {
    let failed = false;
    fakes.hn.intercept((req) => {
      if (req.path !== "/api/v1/search" || !req.query.get("query")?.startsWith("Hnflaky") || failed) return undefined;
      failed = true;
      return { status: 500, body: { message: "internal error" } };
    });
    const { status } = await runJob("Hnflaky", { platforms: ["hackernews"] });
    expect(searches(fakes.hn, "/api/v1/search", "Hnflaky").map((c) => c.query.get("page"))).toEqual(["0", "0"]);
    expect(status.progress.hackernews).toMatchObject({ status: "completed", coverage_state: "exhaustive", stored: 7 });
    expect(status.attempts).toBe(1);
  });

  it("retries the job with backoff when the upstream stays unavailable, resuming only what is unsettled", async () => {
    let refusals = 0;
    fakes.hn.intercept((req) => {
      if (req.path !== "/api/v1/search" || !req.query.get("query")?.startsWith("Hnretry") || refusals >= 3) return undefined;
      refusals++;
      return { status: 503, body: { message: "unavailable" } };
    });
    const { entity, jobId, status } = await runJob("Hnretry", { platforms: ["hackernews", "twitter"] });
    expect(status.status).toBe("completed");
    expect(status.attempts).toBe(2);
    expect(status.progress.hackernews).toMatchObject({ status: "completed", coverage_state: "exhaustive", stored: 4, error: null });
    expect(status.progress.twitter?.status).toBe("blocked");
    expect((await coverageOf(h, entity.id, jobId)).hackernews?.coverageState).toBe("exhaustive");
  }, 20_000);
});

describe("reddit collector (public JSON search)", () => {
  it("follows `after` and records bounded when the page limit stops it", async () => {
    const { entity, jobId, status } = await runJob("Rdbounded", { platforms: ["reddit"] });
    const calls = searches(fakes.reddit, "/search.json", "Rdbounded");
    expect(calls.map((c) => c.query.get("after"))).toEqual([null, "t3_b4"]);
    expect(calls[0]?.query.get("sort")).toBe("new");
    const rows = await contentRows(h, entity.id, "reddit");
    expect(rows.filter((r) => r.kind === "source")).toHaveLength(10);
    // Even-numbered posts carry a comment and a nested reply.
    const comments = rows.filter((r) => r.kind === "comment");
    expect(comments).toHaveLength(10);
    const parentOf = (c: (typeof rows)[number]) => rows.find((s) => s.id === c.parentId);
    expect(comments.every((c) => parentOf(c)?.kind === "source")).toBe(true);
    expect(comments.find((c) => c.externalId === "bc0b")?.metadata).toMatchObject({ parent_external_id: "t1_bc0a" });
    expect(status.progress.reddit).toMatchObject({ status: "completed", coverage_state: "bounded", pages: 2 });
    expect(status.progress.reddit?.reason).toMatch(/page limit/);
    const coverage = await coverageOf(h, entity.id, jobId);
    expect(coverage.reddit?.coverageState).toBe("bounded");
    expect(coverage.reddit?.targets[0]).toMatchObject({ reachedEnd: false, cursorEnd: "t3_b9" });
  });

  it("ends the window at the first post older than it and records exhaustive", async () => {
    const { entity, status } = await runJob("Rdwindow", { platforms: ["reddit"] });
    expect(searches(fakes.reddit, "/search.json", "Rdwindow")).toHaveLength(1);
    expect((await contentRows(h, entity.id, "reddit")).filter((r) => r.kind === "source")).toHaveLength(3);
    expect(status.progress.reddit).toMatchObject({ coverage_state: "exhaustive", pages: 1 });
  });
});

describe("rate-limit answers on every search collector", () => {
  it("hackernews and reddit wait out a 429 with Retry-After, then read to the end", async () => {
    const limitedOnce = (fake: Fake, path: string) => {
      let limited = false;
      fake.intercept((req) => {
        if (req.path !== path || limited || ![...req.query.values()].some((v) => v.includes("Bothlimited"))) return undefined;
        limited = true;
        return { status: 429, headers: { "retry-after": "1" }, body: { message: "Too Many Requests" } };
      });
    };
    limitedOnce(fakes.hn, "/api/v1/search");
    limitedOnce(fakes.reddit, "/search.json");
    const { status } = await runJob("Bothlimited", { platforms: ["hackernews", "reddit"] });
    for (const [fake, path] of [
      [fakes.hn, "/api/v1/search"],
      [fakes.reddit, "/search.json"],
    ] as const) {
      const calls = searches(fake, path, "Bothlimited");
      expect(calls).toHaveLength(2);
      expect((calls[1]?.at ?? 0) - (calls[0]?.at ?? 0)).toBeGreaterThanOrEqual(950);
    }
    expect(status.coverage).toEqual({ hackernews: "exhaustive", reddit: "exhaustive" });
    expect(status.attempts).toBe(1);
  });
});

describe("github collector (search API)", () => {
  it("waits out a 429 with Retry-After, pages by the Link header and stores issue comments under their issue", async () => {
    let limited = false;
    fakes.github.intercept((req) => {
      if (req.path !== "/search/issues" || limited) return undefined;
      limited = true;
      return { status: 429, headers: { "retry-after": "1" }, body: { message: "API rate limit exceeded" } };
    });
    const { entity, status } = await runJob("Ghlimited", { idempotency_key: "github-job-0001" }, { platforms: ["github"] });
    const calls = searches(fakes.github, "/search/issues", "Ghlimited");
    expect(calls.map((c) => c.query.get("page"))).toEqual(["1", "1", "2"]);
    expect((calls[1]?.at ?? 0) - (calls[0]?.at ?? 0)).toBeGreaterThanOrEqual(950);
    expect(calls[0]?.query.get("q")).toMatch(/^Ghlimited created:>=\d{4}-\d{2}-\d{2}$/);
    expect(calls[0]?.headers.accept).toBe("application/vnd.github+json");

    const rows = await contentRows(h, entity.id, "github");
    const sources = rows.filter((r) => r.kind === "source");
    const comments = rows.filter((r) => r.kind === "comment");
    expect(sources).toHaveLength(7);
    expect(comments).toHaveLength(4);
    for (const c of comments) {
      const issueNumber = /on issue (\d+)/.exec(c.content)?.[1];
      expect(sources.find((s) => s.id === c.parentId)?.metadata).toMatchObject({ number: Number(issueNumber), repository: "acme/sdk" });
    }
    // The maintainers' labels are kept by name, for the feedback kind (feedback-kind/labels.ts).
    const labelsOf = (n: number) => sources.find((s) => (s.metadata as { number?: number }).number === n)?.metadata;
    expect(labelsOf(1)).toMatchObject({ labels: ["area: auth", "type: bug"] });
    expect(labelsOf(2)).toMatchObject({ labels: ["enhancement"] });
    expect(labelsOf(3)).toMatchObject({ labels: ["help wanted"] });
    expect(status.progress.github).toMatchObject({ status: "completed", coverage_state: "exhaustive", pages: 2 });
  });
});

describe("web collector (readable text of the entity's URLs)", () => {
  it("stores the readable text of each URL and records the unreadable one as a failed target", async () => {
    const base = fakes.web.url;
    const { entity, jobId, status } = await runJob(
      "Webco",
      { platforms: ["web"] },
      { url: `${base}/`, collection_targets: { docs: [`${base}/pricing`], broken: `${base}/missing`, note: "not a url" } },
    );
    const rows = await contentRows(h, entity.id, "web");
    expect(rows).toHaveLength(2);
    const home = rows.find((r) => r.title === "Webco: the product");
    expect(home?.content).toContain("Webco helps small teams ship invoices without spreadsheets.");
    expect(home?.content).not.toContain("Copyright Acme");
    expect(rows.find((r) => r.title === "Webco pricing")?.content).toContain("nine dollars per seat");

    expect(status.progress.web).toMatchObject({ coverage_state: "sampled", pages: 3, stored: 2 });
    expect(status.progress.web?.reason).toBe("1 of 3 URLs could not be read");
    const coverage = await coverageOf(h, entity.id, jobId);
    expect(coverage.web?.targets.map((t) => [t.target, t.status])).toEqual([
      [`${base}/`, "fetched"],
      [`${base}/pricing`, "fetched"],
      [`${base}/missing`, "failed"],
    ]);
    expect(coverage.web?.targets[2]?.error).toMatch(/404/);
  });

  it("is blocked with a reason when the entity has no URL to read", async () => {
    const { status } = await runJob("Nourl", { platforms: ["web"] });
    expect(status.progress.web).toMatchObject({ status: "blocked", coverage_state: "blocked" });
    expect(status.progress.web?.reason).toMatch(/no url/);
  });
});

describe("coverage per platform and failure isolation", () => {
  it("records blocked with a reason for a refusing upstream and a platform without a collector, without failing the others", async () => {
    fakes.reddit.intercept((req) =>
      req.path === "/search.json" && req.query.get("q")?.includes("Refused")
        ? { status: 403, body: { message: "Forbidden", error: 403 } }
        : undefined,
    );
    const { entity, jobId, status } = await runJob("Refused", { platforms: ["reddit", "hackernews", "twitter"] });
    expect(status.status).toBe("completed");
    expect(status.coverage).toEqual({ reddit: "blocked", hackernews: "exhaustive", twitter: "blocked" });
    expect(status.progress.reddit?.reason).toMatch(/refused.*HTTP 403/);
    expect(status.progress.twitter?.reason).toMatch(/no twitter collector is configured/);
    expect(status.errors).toContainEqual({ platform: "reddit", detail: "upstream answered HTTP 403" });
    // A platform without a collector is listed in `errors` with its reason, like a failed one.
    expect(status.errors).toContainEqual({ platform: "twitter", detail: expect.stringMatching(/no twitter collector is configured/) });
    expect(status.errors.map((e) => e.platform).sort()).toEqual(["reddit", "twitter"]);
    // A permanent refusal is not retried.
    expect(searches(fakes.reddit, "/search.json", "Refused")).toHaveLength(1);
    expect((await contentRows(h, entity.id, "hackernews")).length).toBeGreaterThan(0);

    const coverage = await coverageOf(h, entity.id, jobId);
    expect(coverage.reddit).toMatchObject({ coverageState: "blocked", notes: expect.stringMatching(/HTTP 403/) });
    expect(coverage.twitter).toMatchObject({ coverageState: "blocked", notes: expect.stringMatching(/credentials/) });
    expect(coverage.twitter?.targets[0]).toMatchObject({
      target: "twitter",
      status: "blocked",
      error: expect.stringMatching(/credentials/),
    });
  });
});

describe("collection_only and synthesis", () => {
  it("collection_only: true never starts an analysis", async () => {
    const { entity, status } = await runJob("Onlyco", { platforms: ["hackernews"], collection_only: true });
    expect(status).toMatchObject({ status: "completed", analysis_id: "" });
    expect(status.next).toBe(`/agent/v1/ingest/collection/jobs/${status.job_id}`);
    expect(await h.deps.db.analysis.count({ where: { entityId: entity.id } })).toBe(0);
    const analysisJobs = await h.deps.queues
      .get("analysis")
      .getJobs(["waiting", "delayed", "active", "prioritized", "completed", "failed"]);
    expect(analysisJobs).toHaveLength(0);
  });

  it("collection_only: false creates the analysis of the objective and questions and enqueues it", async () => {
    const entity = await newEntity(h, token, { name: "Onlyco" });
    const request = {
      entity_id: entity.id,
      objective: "Why do teams pick Onlyco?",
      questions: ["What do they praise?"],
      platforms: ["hackernews"],
      idempotency_key: "synthesis-job-01",
    };
    const created = await createJob(h, token, request);
    const status = await pollJob(h, token, created.body.job_id);
    expect(status.status).toBe("completed");
    expect(status.analysis_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(status.next).toBe(`/agent/v1/analysis/${status.analysis_id}`);
    const analysis = await h.deps.db.analysis.findUniqueOrThrow({ where: { id: status.analysis_id } });
    expect(analysis).toMatchObject({ entityId: entity.id, status: "queued", platforms: ["hackernews"] });
    expect(analysis.question).toContain("Why do teams pick Onlyco?");
    expect(analysis.question).toContain("What do they praise?");
    const jobs = await h.deps.queues.get("analysis").getJobs(["waiting", "delayed", "active", "prioritized"]);
    expect(jobs.map((j) => [j.name, j.data])).toContainEqual(["analysis.run.v1", { analysisId: status.analysis_id }]);
    // A replay of the creation now answers the job's current status and its analysis.
    const replay = await createJob(h, token, request);
    expect(replay.body).toEqual({
      status: "completed",
      job_id: created.body.job_id,
      entity_id: entity.id,
      next: expect.any(String),
      analysis_id: status.analysis_id,
    });
  });
});

describe("operator metrics", () => {
  it("serves job outcome, queue and per-platform coverage metrics at /metrics", async () => {
    const res = await h.http.get("/metrics").auth("operator", "operator-password");
    expect(res.status).toBe(200);
    const completed = await h.deps.db.collectionJob.count({ where: { status: "completed" } });
    expect(completed).toBeGreaterThan(5);
    expect(res.text).toContain(`collection_jobs{status="completed"} ${completed}`);
    expect(res.text).toContain('collection_jobs{status="failed"} 0');
    expect(res.text).toMatch(/collection_jobs_oldest_unfinished_seconds \d/);
    expect(res.text).toMatch(/collection_platform_outcomes\{platform="reddit",coverage_state="blocked"\} [1-9]/);
    expect(res.text).toMatch(/collection_platform_outcomes\{platform="hackernews",coverage_state="exhaustive"\} [1-9]/);
    const finished = /queue_jobs_finished_total\{queue="collection",outcome="completed"\} (\d+)/.exec(res.text);
    expect(Number(finished?.[1])).toBe(completed);
    expect(res.text).toMatch(/queue_jobs\{queue="collection",state="waiting"\} \d/);
  });
});
