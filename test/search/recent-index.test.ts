import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { storedProvider } from "../../src/insights/search/providers/stored.js";
import {
  maintainRecentIndex,
  passLeaseKey,
  planRecentIndex,
  RECENT_INDEX_PREFIX,
  type RecentIndexSettings,
  readRecentIndex,
} from "../../src/insights/search/recent-index.js";
import { SEARCH_INDEX_SCHEDULER_ID, startSearchIndexScheduler } from "../../src/insights/search/scheduler.js";
import { takeLease } from "../../src/platform/lease.js";
import { searchIndexProcessor } from "../../workers/search-index.js";
import { createTenant, storeSources, type Tenant, waitFor } from "../analysis/fixtures.js";
import { createHarness, type Harness } from "../helpers/harness.js";

/**
 * The recent search index: a partial GIN of the newest stored originals that the worker builds once the
 * table is large, replaces as rows arrive, and that broad searches use when their window lies within it,
 * with the same answers as without it. Arranged with 6,000 originals stored one every 2.4 hours over 600
 * days (every 20th about pricing, every 7th on hackernews) and 600 of another tenant's, set-based.
 */
let h: Harness;
let tenant: Tenant;
let other: Tenant;

async function seed(t: Tenant, rows: number, options: { newestDaysAgo: number; spreadDays: number; tag: string }) {
  await h.deps.db.$executeRaw`
    INSERT INTO content_store (id, entity_id, workspace_id, kind, platform, url, title, content, author, published_at,
                               content_hash, dedup_key, created_at)
    SELECT gen_random_uuid(), ${t.entityId}::uuid, w.workspace_id, 'source',
           CASE WHEN g % 7 = 0 THEN 'hackernews' ELSE 'reddit' END,
           'https://example.com/' || ${options.tag} || '/' || g,
           'Post ' || g,
           CASE WHEN g % 20 = 0 THEN 'The pricing page and its pricing tiers, post ' || g
                ELSE 'The editor and the export, post ' || g END,
           'someone', NULL, md5(${options.tag} || g), ${options.tag} || ':' || g,
           now() - make_interval(secs => (${options.newestDaysAgo}::float8 + ${options.spreadDays}::float8 * g / ${rows}::int) * 86400)
    FROM generate_series(1, ${rows}::int) g, (SELECT workspace_id FROM entities WHERE id = ${t.entityId}::uuid) w`;
  await h.deps.db.$executeRawUnsafe("ANALYZE content_store");
}

const recentIndexes = async () =>
  h.deps.db.$queryRaw<{ indexname: string; indexdef: string }[]>`
    SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'content_store' AND starts_with(indexname, ${RECENT_INDEX_PREFIX})`;

const settings: RecentIndexSettings = { minRows: 1_000, targetRows: 1_000 };
const handles = () => ({ pool: h.deps.pool, redis: h.deps.redis, redisPrefix: h.config.REDIS_PREFIX });

const DAY = 86_400_000;
/** Broad searches (the provider ranks 20 matches in full; "pricing" is in 300 rows), and their answers before any recent index. */
const requests = [
  { query: "pricing", limit: 5 },
  { query: "pricing", limit: 20, platforms: ["hackernews"] },
  { query: "pricing OR tiers", limit: 10, dateFrom: new Date(Date.now() - 30 * DAY) },
  { query: "pricing", limit: 200 },
];
const search = (r: (typeof requests)[number]) =>
  storedProvider(h.deps.db, { rankAllUpTo: 20, scan: "index" }).search({
    userId: tenant.userId,
    platforms: undefined,
    dateFrom: undefined,
    ...r,
  });
let answersWithoutIndex: Awaited<ReturnType<typeof search>>[];

beforeAll(async () => {
  h = await createHarness({ SEARCH_RECENT_INDEX_MIN_ROWS: "1000", SEARCH_RECENT_INDEX_ROWS: "1000" });
  tenant = await createTenant(h);
  other = await createTenant(h, "Other");
  // A row through the ingest too, so the seeded ones sit beside what the service stores itself.
  await storeSources(h, tenant, [{ platform: "reddit", title: "Pricing today", content: "The pricing page changed today." }]);
  await seed(tenant, 6_000, { newestDaysAgo: 0.01, spreadDays: 600, tag: "mine" });
  await seed(other, 600, { newestDaysAgo: 0.01, spreadDays: 600, tag: "theirs" });
  answersWithoutIndex = [];
  for (const r of requests) answersWithoutIndex.push(await search(r));
}, 60_000);
afterAll(() => h?.close());

describe("planRecentIndex", () => {
  const day = (n: number) => new Date(Date.UTC(2026, 0, 1) + n * DAY);
  // 100 buckets over 100 days, 10 M rows: 100,000 rows a bucket.
  const bounds = Array.from({ length: 101 }, (_, i) => day(i));
  const big = { minRows: 2_000_000, targetRows: 1_000_000 };

  it("builds nothing on a small table or one without statistics", () => {
    expect(planRecentIndex({ total: 1_999_999, bounds }, undefined, big)).toEqual({ keep: "the table is smaller than the bound" });
    expect(planRecentIndex({ total: 10_000_000, bounds: [] }, undefined, big)).toEqual({
      keep: "the table has no created_at statistics yet",
    });
  });

  it("puts a new horizon where about targetRows rows are newer", () => {
    expect(planRecentIndex({ total: 10_000_000, bounds }, undefined, big)).toEqual({ build: day(90) });
    // A table only a little larger than targetRows: the horizon near its start, never before it.
    expect(planRecentIndex({ total: 2_000_000, bounds }, undefined, { minRows: 1, targetRows: 3_000_000 })).toEqual({ build: day(0) });
  });

  it("keeps an index until more than twice targetRows rows are newer than its horizon", () => {
    const current = (n: number) => ({ name: `${RECENT_INDEX_PREFIX}${day(n).getTime()}`, horizon: day(n) });
    expect(planRecentIndex({ total: 10_000_000, bounds }, current(80), big)).toEqual({ keep: "the index is within bounds" });
    expect(planRecentIndex({ total: 10_000_000, bounds }, current(79), big)).toEqual({ build: day(90) });
  });
});

describe("the recent index's upkeep", { timeout: 60_000 }, () => {
  it("builds nothing while the table is smaller than minRows", async () => {
    const outcome = await maintainRecentIndex(handles(), { minRows: 1_000_000, targetRows: 1_000 });
    expect(outcome).toMatchObject({ action: "kept", reason: "the table is smaller than the bound", dropped: [] });
    expect(await recentIndexes()).toEqual([]);
  });

  it("builds a partial GIN over about targetRows of the newest rows", async () => {
    const outcome = await maintainRecentIndex(handles(), settings);
    expect(outcome.action).toBe("built");
    const index = outcome.index!;
    expect(index.name).toBe(`${RECENT_INDEX_PREFIX}${index.horizon.getTime()}`);
    const [def] = await recentIndexes();
    expect(def?.indexname).toBe(index.name);
    expect(def?.indexdef).toContain("USING gin (search_vector) WHERE (created_at >=");
    const [{ newer }] = (await h.deps.db.$queryRaw<{ newer: number }[]>`
      SELECT count(*)::int AS newer FROM content_store WHERE created_at >= ${index.horizon}::timestamptz`) as [{ newer: number }];
    // The histogram's buckets are a few dozen rows wide here: about 1,000 of 6,601 rows.
    expect(newer).toBeGreaterThanOrEqual(1_000);
    expect(newer).toBeLessThan(1_300);
    expect(await readRecentIndex(h.deps.db)).toEqual(index);
  });

  it("keeps it while it is within bounds, and leaves a pass that finds the lease taken", async () => {
    const before = await readRecentIndex(h.deps.db);
    expect(await maintainRecentIndex(handles(), settings)).toMatchObject({
      action: "kept",
      reason: "the index is within bounds",
      index: before,
    });
    // Two passes at once: one holds the lease, the other leaves; the lease is free again afterwards.
    const both = await Promise.all([maintainRecentIndex(handles(), settings), maintainRecentIndex(handles(), settings)]);
    expect(both.map((o) => o.action).sort()).toEqual(["busy", "kept"]);
    expect(await h.deps.redis.exists(passLeaseKey(h.config.REDIS_PREFIX))).toBe(0);
    const held = await takeLease(h.deps.redis, passLeaseKey(h.config.REDIS_PREFIX));
    expect(held).toBeDefined();
    try {
      expect(await maintainRecentIndex(handles(), settings)).toEqual({ action: "busy", dropped: [] });
    } finally {
      await held?.release();
    }
    expect(await maintainRecentIndex(handles(), settings)).toMatchObject({ action: "kept" });
  });

  it("answers broad searches as the table's GIN does, through the recent index", async () => {
    const index = (await readRecentIndex(h.deps.db))!;
    const scans = async () =>
      (
        (await h.deps.db.$queryRaw<{ scans: number }[]>`
          SELECT idx_scan::int AS scans FROM pg_stat_user_indexes WHERE indexrelname = ${index.name}`) as [{ scans: number }]
      )[0].scans;
    const before = await scans();
    for (const [i, r] of requests.entries()) {
      const withIndex = await search(r);
      expect(withIndex.length, JSON.stringify(r)).toBeGreaterThan(0);
      expect(withIndex, JSON.stringify(r)).toEqual(answersWithoutIndex[i]);
      // Tenancy as ever: none of the other tenant's rows.
      const rows = await h.deps.db.content.findMany({
        where: { id: { in: withIndex.map((hit) => hit.contentId!) } },
        select: { workspaceId: true },
      });
      expect(new Set(rows.map((row) => row.workspaceId))).toEqual(new Set([tenant.workspaceId]));
    }
    // The planner used the recent index for the window's matches (the statistics arrive within a second or so).
    const deadline = Date.now() + 5_000;
    while ((await scans()) === before && Date.now() < deadline) {
      await h.deps.db.$executeRawUnsafe("SELECT pg_stat_clear_snapshot()");
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(await scans()).toBeGreaterThan(before);
  });

  it("replaces it with a newer horizon once twice targetRows rows are newer, and drops what a failed build left", async () => {
    const old = (await readRecentIndex(h.deps.db))!;
    // What a failed concurrent build leaves: an index marked invalid.
    const leftover = `${RECENT_INDEX_PREFIX}${old.horizon.getTime() - DAY}`;
    await h.deps.db.$executeRawUnsafe(
      `CREATE INDEX "${leftover}" ON content_store USING GIN (search_vector) WHERE created_at >= '2026-01-01'::timestamptz`,
    );
    await h.deps.db.$executeRawUnsafe(`UPDATE pg_index SET indisvalid = false WHERE indexrelid = '"${leftover}"'::regclass`);
    expect(await maintainRecentIndex(handles(), settings)).toMatchObject({ action: "kept", dropped: [leftover] });

    await seed(tenant, 2_500, { newestDaysAgo: 0, spreadDays: 0.005, tag: "newer" });
    const outcome = await maintainRecentIndex(handles(), settings);
    expect(outcome).toMatchObject({ action: "built", dropped: [old.name] });
    expect(outcome.index!.horizon.getTime()).toBeGreaterThan(old.horizon.getTime());
    expect((await recentIndexes()).map((i) => i.indexname)).toEqual([outcome.index!.name]);
  });

  it("is kept by the worker: the job scheduler's ticks build a newer index once rows arrive", async () => {
    const before = (await readRecentIndex(h.deps.db))!;
    await seed(tenant, 2_500, { newestDaysAgo: 0, spreadDays: 0.001, tag: "newest" });
    h.startWorkers({ "search.recent-index.v1": searchIndexProcessor }, 1);
    const scheduler = startSearchIndexScheduler({ ...h.deps, config: { ...h.config, SEARCH_RECENT_INDEX_INTERVAL_MS: 300 } });
    try {
      const queue = h.deps.queues.get("enrichment");
      expect(await waitFor(() => queue.getJobScheduler(SEARCH_INDEX_SCHEDULER_ID).then((s) => s ?? undefined))).toMatchObject({
        every: 300,
        name: "search.recent-index.v1",
      });
      const after = await waitFor(async () => {
        const now = await readRecentIndex(h.deps.db);
        return now && now.horizon > before.horizon ? now : undefined;
      });
      expect((await recentIndexes()).map((i) => i.indexname)).toEqual([after.name]);
    } finally {
      await scheduler.close();
      await h.deps.queues.get("enrichment").removeJobScheduler(SEARCH_INDEX_SCHEDULER_ID);
    }
  });
});
