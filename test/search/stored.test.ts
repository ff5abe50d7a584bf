import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTenant, storeSources, type Tenant } from "../analysis/fixtures.js";
import { createHarness, type Harness } from "../helpers/harness.js";

let h: Harness;
let alice: Tenant;
let bob: Tenant;
const ids: Record<string, string> = {};

beforeAll(async () => {
  h = await createHarness();
  alice = await createTenant(h, "Acme");
  bob = await createTenant(h, "Globex");
  const [reddit, web, hn, notes, slack, old, undated] = await storeSources(h, alice, [
    {
      platform: "reddit",
      title: "Acme pricing thread",
      content: "Honestly the pricing of Acme is too steep for small teams. Everything else is fine.",
      published_at: "2026-03-01T10:00:00Z",
    },
    {
      platform: "web",
      title: "Review",
      content: "A long review. The pricing tiers are confusing but the product is solid.",
      published_at: "2026-02-01",
    },
    { platform: "hackernews", content: "Show HN discussion: pricing compared with competitors.", published_at: "2026-01-15T00:00:00Z" },
    { platform: "meetingnotes", content: "Customer call: they said pricing is the blocker.", published_at: "2026-03-02T00:00:00Z" },
    { platform: "slack", content: "Internal: we should revisit pricing.", published_at: "2026-03-03T00:00:00Z" },
    { platform: "github", content: "Issue: pricing page returns 404.", published_at: "2020-05-05T00:00:00Z" },
    { platform: "twitter", content: "Acme pricing just changed again" },
  ]);
  Object.assign(ids, { reddit, web, hn, notes, slack, old, undated });
  await storeSources(h, bob, [{ platform: "reddit", content: "Globex pricing secret: only Bob may see this pricing row." }]);
});
afterAll(() => h.close());

const search = (body: unknown, token = alice.token) =>
  h.http
    .post("/agent/v1/search")
    .set("Authorization", `Bearer ${token}`)
    .send(body as object);

describe("POST /agent/v1/search (stored evidence)", () => {
  it("ranks the caller's public rows with snippets, never private platforms or other tenants' rows", async () => {
    const res = await search({ query: "pricing" });
    expect(res.status).toBe(200);
    expect(res.body.query).toBe("pricing");
    const found = res.body.results.map((r: { content_id: string }) => r.content_id).sort();
    expect(found).toEqual([ids.reddit, ids.web, ids.hn, ids.old, ids.undated].sort());
    expect(res.body.count).toBe(5);
    for (const r of res.body.results) {
      expect(r).toEqual({
        title: expect.any(String),
        url: expect.stringMatching(/^https:\/\//),
        platform: expect.any(String),
        snippet: expect.stringMatching(/pricing/i),
        content_id: expect.any(String),
        published_at: r.content_id === ids.undated ? null : expect.any(String),
        score: expect.any(Number),
        source: "stored",
      });
    }
    const scores = res.body.results.map((r: { score: number }) => r.score);
    expect([...scores].sort((a, b) => b - a)).toEqual(scores);
    // Title matches weigh more: the reddit thread titled "Acme pricing thread" ranks first.
    expect(res.body.results[0].content_id).toBe(ids.reddit);
  });

  it("filters by platform, reading news as web and hackernews, and finds nothing on private platforms", async () => {
    const reddit = await search({ query: "pricing", platforms: ["reddit"] });
    expect(reddit.body.results.map((r: { content_id: string }) => r.content_id)).toEqual([ids.reddit]);

    const news = await search({ query: "pricing", platforms: ["news"] });
    expect(news.body.results.map((r: { platform: string }) => r.platform).sort()).toEqual(["hackernews", "web"]);

    const privateOnly = await search({ query: "pricing", platforms: ["meetingnotes", "slack"] });
    expect(privateOnly.status).toBe(200);
    expect(privateOnly.body).toEqual({ results: [], count: 0, query: "pricing" });
  });

  it("applies date_from to published_at, or to the stored time when a row has no publication date", async () => {
    const res = await search({ query: "pricing", date_from: "2026-02-01" });
    const found = res.body.results.map((r: { content_id: string }) => r.content_id).sort();
    expect(found).toEqual([ids.reddit, ids.web, ids.undated].sort());

    const precise = await search({ query: "pricing", date_from: "2026-02-15T00:00:00Z" });
    expect(precise.body.results.map((r: { content_id: string }) => r.content_id).sort()).toEqual([ids.reddit, ids.undated].sort());
  });

  it("honours limit and web-search syntax", async () => {
    const one = await search({ query: "pricing", limit: 1 });
    expect(one.body.count).toBe(1);
    expect(one.body.results).toHaveLength(1);

    const phrase = await search({ query: '"pricing page"' });
    expect(phrase.body.results.map((r: { content_id: string }) => r.content_id)).toEqual([ids.old]);

    const excluded = await search({ query: "pricing -competitors -confusing" });
    const found = excluded.body.results.map((r: { content_id: string }) => r.content_id);
    expect(found).not.toContain(ids.hn);
    expect(found).not.toContain(ids.web);
  });

  it("validates the body with the spec's 422 shape", async () => {
    for (const [body, loc] of [
      [{}, ["body", "query"]],
      [{ query: "" }, ["body", "query"]],
      [{ query: "x".repeat(2001) }, ["body", "query"]],
      [{ query: "pricing", limit: 0 }, ["body", "limit"]],
      [{ query: "pricing", limit: 201 }, ["body", "limit"]],
      [{ query: "pricing", platforms: ["myspace"] }, ["body", "platforms", 0]],
      [{ query: "pricing", date_from: "last week" }, ["body", "date_from"]],
    ] as const) {
      const res = await search(body);
      expect(res.status, JSON.stringify(body)).toBe(422);
      expect(res.body.detail[0]).toMatchObject({ loc, msg: expect.any(String), type: expect.any(String) });
    }
    const nulls = await search({ query: "pricing", platforms: null, limit: null, date_from: null, unknown_field: 1 });
    expect(nulls.status).toBe(200);
    expect(nulls.body.count).toBe(5);
    const max = await search({ query: "x".repeat(2000), limit: 200 });
    expect(max.status).toBe(200);
  });

  it("takes only a user session bearer: API keys are refused with 401", async () => {
    const created = await h.http
      .post("/api/user/keys")
      .set("Authorization", `Bearer ${alice.token}`)
      .send({ name: "all", scopes: ["*"] });
    expect(created.status).toBe(201);
    const withKey = await h.http.post("/agent/v1/search").set("Authorization", `Bearer ${created.body.raw_key}`).send({ query: "pricing" });
    expect(withKey.status).toBe(401);
    expect(withKey.body.code).toBe("bearer_required");
    const anonymous = await h.http.post("/agent/v1/search").send({ query: "pricing" });
    expect(anonymous.status).toBe(401);
  });

  it("a user without workspaces finds nothing", async () => {
    const res = await search({ query: "pricing" }, await h.token());
    expect(res.status).toBe(200);
    expect(res.body.count).toBe(0);
  });
});
