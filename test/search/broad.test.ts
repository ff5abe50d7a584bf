import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { storedProvider } from "../../src/insights/search/providers/stored.js";
import { createTenant, storeSources, type Tenant } from "../analysis/fixtures.js";
import { createHarness, type Harness } from "../helpers/harness.js";

/**
 * Broad queries: when the planner expects more matches than the provider ranks in full,
 * it ranks the most recently stored ones, and falls back to all matches when that window
 * holds fewer than `limit`. Arranged with 40 matching rows stored over 40 days (dates set
 * directly), one old row being the best match of all.
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

describe("stored search provider, broad queries", () => {
  it("ranks every match when the query is narrow enough", async () => {
    const hits = await storedProvider(h.deps.db, { rankAllUpTo: 1000 }).search(request(3));
    expect(hits[0]?.contentId).toBe(ids[0]);
  });

  it("ranks only the most recently stored matches when the query is broad", async () => {
    const hits = await storedProvider(h.deps.db, { rankAllUpTo: 8 }).search(request(3));
    expect(hits).toHaveLength(3);
    expect(hits.map((hit) => hit.contentId)).not.toContain(ids[0]);
    const rows = await h.deps.db.content.findMany({ where: { id: { in: hits.map((hit) => hit.contentId!) } } });
    const oldest = Math.min(...rows.map((r) => r.createdAt.getTime()));
    expect(Date.now() - oldest).toBeLessThan(20 * 24 * 3600 * 1000);
  });

  it("falls back to every match when the recent window holds fewer than limit", async () => {
    const hits = await storedProvider(h.deps.db, { rankAllUpTo: 8 }).search(request(30));
    expect(hits).toHaveLength(30);
    expect(hits[0]?.contentId).toBe(ids[0]);
  });
});
