import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { QUEUE_NAMES } from "../../src/platform/queues.js";
import { type Cluster, isCluster, scanKeys } from "../../src/platform/redis.js";
import { createHarness, type Harness } from "../helpers/harness.js";

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(async () => {
  await h?.close();
});

describe("the service on a Redis Cluster", () => {
  it("connects to every master of the cluster", async () => {
    expect(isCluster(h.deps.redis)).toBe(true);
    const cluster = h.deps.redis as Cluster;
    expect(cluster.nodes("master")).toHaveLength(3);
    expect(await h.http.get("/agent/v1/health").then((r) => r.status)).toBe(200);
  });

  it("keeps each queue in one slot and spreads the queues over the masters", async () => {
    const cluster = h.deps.redis as Cluster;
    await Promise.all(h.deps.queues.all().map((q) => q.add("probe", {}, { delay: 60_000 })));
    const slotsOfQueue = new Map<string, Set<number>>();
    for (const name of QUEUE_NAMES) {
      const keys = await scanKeys(cluster, `${h.deps.queues.prefixFor(name)}:*`);
      expect(keys.length, name).toBeGreaterThan(0);
      for (const key of keys) expect(key.startsWith(`${h.config.REDIS_PREFIX}:{${name}}:${name}:`), key).toBe(true);
      const slots = await Promise.all(keys.map((k) => cluster.cluster("KEYSLOT", k) as Promise<number>));
      slotsOfQueue.set(name, new Set(slots));
    }
    for (const [name, slots] of slotsOfQueue) expect(slots.size, name).toBe(1);
    const owners = new Set<string>();
    const ranges = (await cluster.cluster("SLOTS")) as unknown as [number, number, [string, number]][];
    for (const slots of slotsOfQueue.values()) {
      const slot = [...slots][0]!;
      const range = ranges.find(([from, to]) => slot >= from && slot <= to)!;
      owners.add(`${range[2][0]}:${range[2][1]}`);
    }
    expect(owners.size).toBeGreaterThan(1);
    await Promise.all(h.deps.queues.all().map((q) => q.obliterate({ force: true })));
  });

  it("serves the queue board and the queue metrics from the cluster", async () => {
    await h.deps.queues.get("collection").add("probe", {}, { delay: 60_000 });
    const api = await h.http.get("/admin/queues/api/queues").auth("operator", "operator-password");
    expect(api.status).toBe(200);
    const names = api.body.queues.map((q: { name: string }) => q.name);
    expect(names).toEqual(expect.arrayContaining(["analysis", "collection", "enrichment", "routines"]));
    const collection = api.body.queues.find((q: { name: string }) => q.name === "collection");
    expect(collection.counts.delayed).toBe(1);
    const metrics = await h.http.get("/metrics").auth("operator", "operator-password");
    expect(metrics.status).toBe(200);
    expect(metrics.text).toMatch(/queue_jobs\{queue="collection",state="delayed"\} 1/);
    await h.deps.queues.get("collection").obliterate({ force: true });
  });
});
