import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createTenant, storeSources, type Tenant } from "../analysis/fixtures.js";
import { createHarness, type Harness } from "../helpers/harness.js";

/**
 * A local server answering like SearXNG's `GET /search?format=json`; `mode` switches how
 * it behaves for each test.
 */
type Mode = "ok" | "http500" | "http503" | "not-json" | "no-results" | "hang" | "reset";
let mode: Mode = "ok";
const requests: URL[] = [];
let searx: Server;
let h: Harness;
let alice: Tenant;
let storedId: string;

function searxAnswer(req: IncomingMessage) {
  const url = new URL(req.url ?? "/", "http://localhost");
  const q = url.searchParams.get("q") ?? "";
  return {
    query: q,
    number_of_results: 3,
    results: [
      {
        url: "https://github.com/acme/acme/issues/7",
        title: "Pricing API returns stale plans",
        content: `Issue about ${q} on GitHub`,
        engine: "duckduckgo",
        engines: ["duckduckgo"],
        score: 2.5,
        category: "general",
        publishedDate: "2026-04-01T00:00:00",
      },
      {
        url: "https://www.example.com/acme-review/#comments",
        title: "Acme review",
        content: "The same review the service stored",
        engine: "bing",
        score: 1.2,
        publishedDate: null,
      },
      {
        url: "https://blog.example.org/old-post",
        title: "Old post",
        content: "Pricing in 2019",
        score: 0.5,
        publishedDate: "2019-01-01T00:00:00",
      },
      { title: "no url, ignored" },
    ],
    answers: [],
    suggestions: [],
    unresponsive_engines: [],
  };
}

beforeAll(async () => {
  searx = createServer((req, res) => {
    requests.push(new URL(req.url ?? "/", "http://localhost"));
    switch (mode) {
      case "ok":
        res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(searxAnswer(req)));
        return;
      case "no-results":
        res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ query: "x", results: [] }));
        return;
      case "http500":
        res.writeHead(500, { "content-type": "text/html" }).end("<h1>Internal Server Error</h1>");
        return;
      case "http503":
        res.writeHead(503).end();
        return;
      case "not-json":
        res.writeHead(200, { "content-type": "text/html" }).end("<html>rate limited</html>");
        return;
      case "hang":
        return; // never answers; the provider's timeout fires
      case "reset":
        req.socket.destroy();
        return;
    }
  });
  await new Promise<void>((resolve) => searx.listen(0, "127.0.0.1", resolve));
  const port = (searx.address() as AddressInfo).port;
  h = await createHarness({ SEARXNG_URL: `http://127.0.0.1:${port}`, SEARCH_PROVIDER_TIMEOUT_MS: "300" });
  alice = await createTenant(h);
  const stored = await storeSources(h, alice, [
    { platform: "web", url: "https://example.com/acme-review", title: "Acme review", content: "Pricing is fair for what you get." },
  ]);
  storedId = stored[0]!;
});
afterAll(async () => {
  await h.close();
  searx.closeAllConnections();
  await new Promise((resolve) => searx.close(resolve));
});
beforeEach(() => {
  mode = "ok";
  requests.length = 0;
});

const search = (body: object) => h.http.post("/agent/v1/search").set("Authorization", `Bearer ${alice.token}`).send(body);

describe("POST /agent/v1/search with a SearXNG provider", () => {
  it("merges external results with stored ones, one per page, stored copy first", async () => {
    const res = await search({ query: "acme pricing" });
    expect(res.status).toBe(200);
    expect(requests[0]?.pathname).toBe("/search");
    expect(requests[0]?.searchParams.get("format")).toBe("json");
    expect(requests[0]?.searchParams.get("q")).toBe("acme pricing");

    const byUrl = Object.fromEntries(res.body.results.map((r: { url: string }) => [r.url, r]));
    expect(res.body.count).toBe(3);
    // The stored review and SearXNG's copy of it are one result, credited to both providers.
    expect(byUrl["https://example.com/acme-review"]).toMatchObject({ content_id: storedId, source: "stored", platform: "web" });
    expect(byUrl["https://www.example.com/acme-review/#comments"]).toBeUndefined();
    expect(res.body.results[0].content_id).toBe(storedId);
    expect(byUrl["https://github.com/acme/acme/issues/7"]).toMatchObject({
      platform: "github",
      content_id: null,
      source: "searxng",
      snippet: "Issue about acme pricing on GitHub",
      published_at: "2026-04-01T00:00:00.000Z",
    });
    expect(byUrl["https://blog.example.org/old-post"]).toMatchObject({ platform: "web", source: "searxng" });
  });

  it("applies the platform and date filters to external results too", async () => {
    const github = await search({ query: "acme pricing", platforms: ["github"] });
    expect(github.body.results.map((r: { url: string }) => r.url)).toEqual(["https://github.com/acme/acme/issues/7"]);
    const recent = await search({ query: "acme pricing", date_from: "2025-01-01" });
    const urls = recent.body.results.map((r: { url: string }) => r.url);
    expect(urls).not.toContain("https://blog.example.org/old-post");
    expect(urls).toContain("https://github.com/acme/acme/issues/7");
  });

  it("an empty external answer is a success", async () => {
    mode = "no-results";
    const res = await search({ query: "acme pricing" });
    expect(res.status).toBe(200);
    expect(res.body.results.map((r: { content_id: string }) => r.content_id)).toEqual([storedId]);
  });

  it.each([
    ["http500", 502, "upstream_error"],
    ["not-json", 502, "upstream_error"],
    ["http503", 503, "upstream_unavailable"],
    ["hang", 503, "upstream_unavailable"],
    ["reset", 503, "upstream_unavailable"],
  ] as const)("a provider that fails (%s) answers %i, never an empty success", async (failure, status, code) => {
    mode = failure;
    const res = await search({ query: "acme pricing" });
    expect(res.status).toBe(status);
    expect(res.body).toEqual({ detail: expect.stringContaining("searxng"), code });
    expect(res.body.results).toBeUndefined();
  });
});

describe("POST /agent/v1/search with an unreachable provider", () => {
  it("answers 503 when nothing listens at the configured address", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const h2 = await createHarness({ SEARXNG_URL: `http://127.0.0.1:${port}` });
    try {
      const tenant = await createTenant(h2);
      const res = await h2.http.post("/agent/v1/search").set("Authorization", `Bearer ${tenant.token}`).send({ query: "pricing" });
      expect(res.status).toBe(503);
      expect(res.body.code).toBe("upstream_unavailable");
    } finally {
      await h2.close();
    }
  });
});
