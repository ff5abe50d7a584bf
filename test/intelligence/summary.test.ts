import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sweepProcessor } from "../../workers/sweeps.js";
import { bearer, createKeyFor } from "../helpers/evidence.js";
import { createHarness, type Harness } from "../helpers/harness.js";

/**
 * GET /agent/v1/intelligence/summary over stored originals whose opinion units are written here
 * with known aspects and polarity (offsets into the real rows), so every figure is known; and
 * once over units the enrichment itself wrote.
 */
let h: Harness;
let token: string;
let acme: string;
let globex: string;

const DAY = 86_400_000;
const daysAgo = (n: number) => new Date(Date.now() - n * DAY).toISOString();

type Unit = { text: string; aspect: string | null; side: "complaint" | "praise" | "request" | "neutral"; strength?: number };
interface Original {
  platform: string;
  days: number;
  units: Unit[];
  comment?: { units: Unit[] };
  /** Left unenriched: no units, no enriched_at. */
  raw?: boolean;
}

let serial = 0;
/** Stores originals through ingest, then writes their opinion units as the enrichment would. */
async function store(entityId: string, originals: Original[]) {
  for (const o of originals) {
    serial += 1;
    const content = o.units.map((u) => u.text).join(" ") || `Plain original ${serial}.`;
    const body = {
      entity_id: entityId,
      sources: [
        {
          id: `o-${serial}`,
          platform: o.platform,
          url: `https://example.com/${serial}`,
          author: `author-${serial}`,
          published_at: daysAgo(o.days),
          content,
          comments: o.comment
            ? [{ id: `c-${serial}`, text: o.comment.units.map((u) => u.text).join(" "), published_at: daysAgo(o.days) }]
            : [],
        },
      ],
    };
    const res = await h.http.post("/agent/v1/ingest/content").set(bearer(token)).send(body).expect(200);
    const [sourceId, commentId] = res.body.content_ids as string[];
    if (o.raw) continue;
    const rows: [string, string, Unit[]][] = [[sourceId as string, content, o.units]];
    if (o.comment && commentId) rows.push([commentId, body.sources[0]?.comments[0]?.text as string, o.comment.units]);
    for (const [contentId, text, units] of rows) {
      await h.deps.db.opinionUnit.createMany({
        data: units.map((u) => {
          const start = text.indexOf(u.text);
          const strength = u.strength ?? 0.6;
          const sentiment = u.side === "complaint" ? -strength : u.side === "praise" ? strength : 0;
          return {
            contentId,
            entityId,
            startOffset: start,
            endOffset: start + u.text.length,
            text: u.text,
            aspect: u.aspect,
            sentiment,
            sentimentLabel: u.side === "complaint" ? "negative" : u.side === "praise" ? "positive" : "neutral",
            kind: u.side === "request" ? "request" : "opinion",
            terms: u.aspect ? [u.aspect] : [],
            analyserVersion: 2,
          };
        }),
      });
      const original = await h.deps.db.content.findUniqueOrThrow({ where: { id: contentId } });
      const enrichment = { enrichedAt: new Date(), embeddingModel: "local-hashing-v1", embedding: [1] };
      await h.deps.db.contentEnrichment.upsert({
        where: { contentId },
        create: {
          contentId,
          entityId: original.entityId,
          platform: original.platform,
          createdAt: original.createdAt,
          ...enrichment,
        },
        update: enrichment,
      });
    }
  }
}

const summary = (query: string, auth: Record<string, string> = bearer(token)) =>
  h.http.get(`/agent/v1/intelligence/summary?${query}`).set(auth);

beforeAll(async () => {
  h = await createHarness();
  token = await h.token();
  const onboarded = await h.http
    .post("/api/entities/onboarding")
    .set(bearer(token))
    .send({ request_id: randomUUID(), company: { name: "Acme", platforms: ["reddit", "hackernews"] }, competitors: [{ name: "Globex" }] })
    .expect(201);
  acme = onboarded.body.company.id;
  globex = onboarded.body.competitors[0].id;

  const pricingBad = (n: number, strength = 0.6): Unit => ({
    text: `Pricing is a rip-off number ${n}.`,
    aspect: "pricing",
    side: "complaint",
    strength,
  });
  await store(acme, [
    // Current window (the last 30 days).
    { platform: "reddit", days: 2, units: [pricingBad(1, 0.9), { text: "Sync is wonderful.", aspect: "sync", side: "praise" }] },
    { platform: "reddit", days: 5, units: [pricingBad(2, 0.4), { text: "Acme is everywhere.", aspect: "acme", side: "neutral" }] },
    {
      platform: "hackernews",
      days: 8,
      units: [
        { text: "Please add CSV export.", aspect: "export", side: "request" },
        { text: "Acme rocks.", aspect: "acme", side: "praise" },
      ],
      comment: { units: [pricingBad(3, 0.7), { text: "Sync works great for me.", aspect: "sync", side: "praise" }] },
    },
    {
      platform: "hackernews",
      days: 12,
      units: [
        { text: "Pricing is fair for teams.", aspect: "pricing", side: "praise" },
        { text: "I wish it had CSV export.", aspect: "export", side: "request" },
      ],
    },
    {
      platform: "reddit",
      days: 15,
      units: [
        { text: "Support was slow to answer.", aspect: "support", side: "complaint" },
        { text: "Acme again.", aspect: "acme", side: "neutral" },
      ],
    },
    { platform: "reddit", days: 20, units: [{ text: "Just a note.", aspect: null, side: "neutral" }], raw: true },
    // Previous window (30 to 60 days ago).
    { platform: "reddit", days: 35, units: [pricingBad(4), { text: "Search never finds my notes.", aspect: "search", side: "complaint" }] },
    { platform: "reddit", days: 40, units: [{ text: "Search is broken again.", aspect: "search", side: "complaint" }] },
    { platform: "hackernews", days: 45, units: [{ text: "Search results are useless.", aspect: "search", side: "complaint" }] },
    // Older than both windows.
    { platform: "reddit", days: 90, units: [{ text: "Search was fine back then.", aspect: "search", side: "praise" }] },
  ]);
  await store(globex, [
    { platform: "reddit", days: 3, units: [{ text: "Globex pricing is a bargain.", aspect: "pricing", side: "praise", strength: 0.8 }] },
    { platform: "reddit", days: 9, units: [{ text: "Cheap and fair pricing at Globex.", aspect: "pricing", side: "praise" }] },
  ]);
  await h.http
    .post("/agent/v1/ingest/coverage")
    .set(bearer(token))
    .send({
      entity_id: acme,
      collector: "reddit",
      coverage_state: "exhaustive",
      run_id: "reddit-run-1",
      collection_scope: "subreddit:acme:last_60_days",
      query: "acme",
      finished_at: daysAgo(1),
      targets: [{ target: "r/acme", items_found: 7, items_stored: 7, reached_end: true }],
    })
    .expect(200);
});
afterAll(() => h.close());

describe("GET /agent/v1/intelligence/summary", () => {
  it("answers the window's platforms, themes with polarity and verbatim quotes, changes and competitor gaps", async () => {
    const res = await summary(`entity_id=${acme}&window_days=30`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const body = res.body;
    expect(body).toMatchObject({ entity_id: acme, entity: { name: "Acme", kind: "company" }, window_days: 30 });
    expect(Date.parse(body.windows.current.end) - Date.parse(body.windows.current.start)).toBe(30 * DAY);
    expect(body.windows.previous.end).toBe(body.windows.current.start);

    // Originals per platform and window (stored rows, enriched or not), with the latest coverage.
    expect(body.platforms).toEqual([
      {
        platform: "reddit",
        current: { sources: 4, comments: 0 },
        previous: { sources: 2, comments: 0 },
        coverage: expect.objectContaining({
          coverage_state: "exhaustive",
          proven: true,
          run_id: "reddit-run-1",
          collection_scope: "subreddit:acme:last_60_days",
          targets: 1,
          targets_read_to_end: 1,
          items_found: 7,
          items_stored: 7,
        }),
      },
      {
        platform: "hackernews",
        current: { sources: 2, comments: 1 },
        previous: { sources: 1, comments: 0 },
        coverage: null,
      },
    ]);
    expect(body.totals).toEqual({
      current: { sources: 6, comments: 1, with_opinion_units: 6, opinion_units: 12 },
      previous: { sources: 3, comments: 0, with_opinion_units: 3, opinion_units: 4 },
    });

    // Themes: named by at least two originals; the entity's own name is not one.
    expect(body.themes.map((t: Record<string, unknown>) => [t.aspect, t.polarity, t.sources, t.previous_sources, t.change])).toEqual([
      ["pricing", "complaint", 4, 1, "growing"],
      ["export", "request", 2, 0, "new"],
      ["sync", "praise", 2, 0, "new"],
    ]);
    const pricing = body.themes[0];
    expect(pricing).toMatchObject({
      label: "Pricing",
      counts: { complaint: 3, praise: 1, request: 0, neutral: 0 },
      statements: 4,
      share: 0.667,
    });
    // The strongest complaints, from different originals, verbatim.
    expect(pricing.quotes.map((q: { quote: string }) => q.quote)).toEqual([
      "Pricing is a rip-off number 1.",
      "Pricing is a rip-off number 3.",
    ]);
    for (const theme of body.themes) {
      expect(theme.quotes.length).toBeGreaterThanOrEqual(1);
      for (const q of theme.quotes) {
        const row = await h.deps.db.content.findUniqueOrThrow({ where: { id: q.content_id } });
        expect([...row.content].slice(q.start, q.end).join("")).toBe(q.quote);
        expect(q).toMatchObject({ platform: row.platform, url: row.url, author: row.author });
      }
    }

    expect(body.changes.new.map((c: { aspect: string }) => c.aspect)).toEqual(["export", "sync"]);
    expect(body.changes.growing).toEqual([
      {
        aspect: "pricing",
        label: "Pricing",
        polarity: "complaint",
        current_sources: 4,
        previous_sources: 1,
        current_share: 0.667,
        previous_share: 0.333,
      },
    ]);
    expect(body.changes.fading).toEqual([
      expect.objectContaining({ aspect: "search", polarity: "complaint", current_sources: 0, previous_sources: 3 }),
    ]);

    expect(body.competitors).toEqual([{ id: globex, name: "Globex", sources: 2 }]);
    expect(body.competitor_gaps).toEqual([
      {
        aspect: "pricing",
        label: "Pricing",
        direction: "competitor_ahead",
        company: expect.objectContaining({
          entity_id: acme,
          polarity: "complaint",
          sources: 4,
          quote: expect.objectContaining({ quote: "Pricing is a rip-off number 1." }),
        }),
        competitor: expect.objectContaining({
          entity_id: globex,
          name: "Globex",
          polarity: "praise",
          sources: 2,
          quote: expect.objectContaining({ quote: "Globex pricing is a bargain." }),
        }),
      },
    ]);
    expect(body.limitations.join(" ")).toMatch(/1 original\(s\) of the current window have no opinion units/);
    expect(body.limitations.join(" ")).toMatch(/not proven exhaustive for: hackernews/);
    expect(body.basis.counts).toMatch(/never of people/);
  });

  it("reads another window length and the competitor's own view", async () => {
    const wide = await summary(`entity_id=${acme}&window_days=90`);
    expect(wide.status).toBe(200);
    // 90 days hold the earlier complaints about search; the praise from 90 days ago is just before them.
    const search = wide.body.themes.find((t: { aspect: string }) => t.aspect === "search");
    expect(search).toMatchObject({ polarity: "complaint", sources: 3, previous_sources: 1, counts: { complaint: 3, praise: 0 } });
    expect(wide.body.totals.previous).toMatchObject({ sources: 1, with_opinion_units: 1 });

    const theirs = await summary(`entity_id=${globex}`);
    expect(theirs.status).toBe(200);
    expect(theirs.body).toMatchObject({ window_days: 30, competitors: [], competitor_gaps: [] });
    expect(theirs.body.themes).toEqual([expect.objectContaining({ aspect: "pricing", polarity: "praise", sources: 2 })]);
    expect(theirs.body.limitations.join(" ")).toMatch(/itself a competitor/);
  });

  it("validates window_days, hides other callers' entities, and takes a bearer or an ingest key", async () => {
    for (const [value, type] of [
      ["6", "greater_than_equal"],
      ["366", "less_than_equal"],
      ["ten", "string_pattern_mismatch"],
    ]) {
      const res = await summary(`entity_id=${acme}&window_days=${value}`);
      expect(res.status, value).toBe(422);
      expect(res.body.detail[0]).toMatchObject({ loc: ["query", "window_days"], type });
    }
    // A fractional number of days (the client clamps but does not round) counts whole days.
    expect((await summary(`entity_id=${acme}&window_days=30.5`)).body.window_days).toBe(30);
    expect((await summary("window_days=30")).body.detail[0]).toMatchObject({ loc: ["query", "entity_id"], type: "missing" });

    const stranger = await h.token();
    const foreign = await summary(`entity_id=${acme}`, bearer(stranger));
    expect(foreign.status).toBe(404);
    expect(foreign.text).not.toContain("Pricing");
    const ingest = await createKeyFor(h, token, ["ingest"]);
    const exportKey = await createKeyFor(h, token, ["export"]);
    expect((await summary(`entity_id=${acme}`, { "X-API-Key": ingest.raw_key })).status).toBe(200);
    expect((await summary(`entity_id=${acme}`, { "X-API-Key": exportKey.raw_key })).status).toBe(403);
  });

  it("reads the opinion units the enrichment wrote", async () => {
    const entity = await h.http
      .post("/api/entities")
      .set(bearer(token))
      .send({ name: "Notely", platforms: ["reddit"] })
      .expect(201);
    await h.http
      .post("/agent/v1/ingest/content")
      .set(bearer(token))
      .send({
        entity_id: entity.body.id,
        sources: [
          { platform: "reddit", content: "The price is way too expensive for what it does.", published_at: daysAgo(1) },
          { platform: "reddit", content: "Honestly the pricing is too expensive and I cancelled.", published_at: daysAgo(2) },
          { platform: "reddit", content: "Too expensive. The pricing makes no sense for small teams.", published_at: daysAgo(3) },
        ],
      })
      .expect(200);
    const workers = h.startWorkers({ "sweep.run.v1": sweepProcessor });
    try {
      const run = await h.http
        .post("/api/sweeps/run")
        .set(bearer(token))
        .send({ entity_id: entity.body.id, idempotency_key: "notely-capture" });
      expect(run.body.status).toBe("completed");
    } finally {
      await workers.close();
    }
    const res = await summary(`entity_id=${entity.body.id}&window_days=7`);
    expect(res.status).toBe(200);
    expect(res.body.totals.current).toMatchObject({ sources: 3, with_opinion_units: 3 });
    expect(res.body.themes[0]).toMatchObject({ aspect: "pricing", polarity: "complaint", sources: 3, change: "new" });
    expect(res.body.themes[0].quotes).toHaveLength(2);
  });
});
