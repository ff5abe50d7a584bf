import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { storedProvider, type WindowScan, windowScan } from "../../src/insights/search/providers/stored.js";
import { createTenant, storeSources, type Tenant } from "../analysis/fixtures.js";
import { createHarness, type Harness } from "../helpers/harness.js";

/**
 * Broad queries: when the planner expects more matches than the provider ranks in full,
 * it ranks the most recently stored ones, and falls back to all matches when that window
 * holds fewer than `limit`; the window is found through the GIN and the created_at index, or
 * through the created_at index alone, with the same results. Arranged with 40 matching rows
 * stored over 40 days (dates set directly), one old row being the best match of all.
 */
let h: Harness;
let tenant: Tenant;
let ids: string[];

beforeAll(async () => {
  h = await createHarness();
  tenant = await createTenant(h);
  ids = await storeSources(
    h,
    tenant,
    Array.from({ length: 40 }, (_, i) =>
      i === 0
        ? {
            platform: "reddit",
            title: "Pricing pricing pricing",
            content: "Pricing, pricing and more pricing: the pricing page, pricing tiers.",
          }
        : { platform: "reddit", title: `Post ${i}`, content: `Post ${i} mentions pricing once among other words about the product.` },
    ),
  );
  // Row i was stored i days ago, except the best match (row 0): 100 days ago, the oldest.
  for (const [i, id] of ids.entries()) {
    const daysAgo = i === 0 ? 100 : i;
    await h.deps.db.$executeRaw`UPDATE content_store SET created_at = now() - make_interval(days => ${daysAgo}) WHERE id = ${id}::uuid`;
  }
  await h.deps.db.$executeRawUnsafe("ANALYZE content_store");
});
afterAll(() => h.close());

const request = (limit: number) => ({ userId: tenant.userId, query: "pricing", platforms: undefined, limit, dateFrom: undefined });

describe.each<WindowScan>(["index", "recent"])("stored search provider, broad queries, window found by %s", (scan) => {
  it("ranks every match when the query is narrow enough", async () => {
    const hits = await storedProvider(h.deps.db, { rankAllUpTo: 1000, scan }).search(request(3));
    expect(hits[0]?.contentId).toBe(ids[0]);
  });

  it("ranks only the most recently stored matches when the query is broad", async () => {
    const hits = await storedProvider(h.deps.db, { rankAllUpTo: 8, scan }).search(request(3));
    expect(hits).toHaveLength(3);
    expect(hits.map((hit) => hit.contentId)).not.toContain(ids[0]);
    const rows = await h.deps.db.content.findMany({ where: { id: { in: hits.map((hit) => hit.contentId!) } } });
    const oldest = Math.min(...rows.map((r) => r.createdAt.getTime()));
    expect(Date.now() - oldest).toBeLessThan(20 * 24 * 3600 * 1000);
  });

  it("falls back to every match when the recent window holds fewer than limit", async () => {
    const hits = await storedProvider(h.deps.db, { rankAllUpTo: 8, scan }).search(request(30));
    expect(hits).toHaveLength(30);
    expect(hits[0]?.contentId).toBe(ids[0]);
  });

  it("keeps to the caller's workspaces", async () => {
    const other = await createTenant(h);
    const theirs = await storeSources(h, other, [{ platform: "reddit", title: "Pricing", content: "Pricing pricing pricing, today." }]);
    const hits = await storedProvider(h.deps.db, { rankAllUpTo: 8, scan }).search(request(30));
    expect(hits.map((hit) => hit.contentId)).not.toContain(theirs[0]);
    expect(hits.every((hit) => ids.includes(hit.contentId!))).toBe(true);
  });
});

describe("windowScan", () => {
  it("reads the window through the created_at index alone for a word in a large share of a large table", () => {
    // Measured at 10 M rows: a word in 27% of them (a window of 37,000 rows holds 10,000 of its matches),
    // one in 3.7% (272,000 rows), one in 0.46% (the window's bound, 500,000 rows).
    expect(windowScan(2_680_538, 10_000_000, 37_300)).toBe("recent");
    expect(windowScan(366_841, 10_000_000, 272_600)).toBe("index");
    expect(windowScan(45_928, 10_000_000, 500_000)).toBe("index");
    // At 1 M rows: the word in 27% of them, and one in 1.2%.
    expect(windowScan(268_634, 1_000_000, 37_200)).toBe("recent");
    expect(windowScan(12_000, 1_000_000, 500_000)).toBe("index");
  });

  it("counts only the recent index's entries when one serves the window", () => {
    // A word in 10% of 10 M rows: its window of 100,000 rows holds 10,000 matches. Through the table's GIN all
    // 1 M entries are decoded; through a recent index of the newest 1 M rows, 100,000.
    expect(windowScan(1_000_000, 10_000_000, 100_000)).toBe("recent");
    expect(windowScan(1_000_000, 10_000_000, 100_000, 1_000_000)).toBe("index");
    // The word in 27%: reading its window row by row stays cheaper even then.
    expect(windowScan(2_680_538, 10_000_000, 37_300, 1_000_000)).toBe("recent");
  });
});
