import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { analysisChannel } from "../../src/insights/analysis/events.js";
import { collectionProcessor } from "../../src/intake/collection/runner.js";
import { publish } from "../../src/platform/redis.js";
import { type Fake, hackernewsFake, hnStories } from "../collection/fakes.js";
import { contentRows, createJob, newEntity, pollJob, until } from "../collection/support.js";
import { createHarness, type Harness } from "../helpers/harness.js";
import { type ClusterNode, type RedisClusterHandle, startRedisCluster } from "../support/redis-cluster.js";

/**
 * A Redis Cluster losing a master. The suite runs on a cluster of its own (three masters,
 * one replica each, a one-second node timeout): the master that holds the collection queue
 * (and an analysis channel) is killed; once its replica is promoted, collection jobs still
 * complete, the API still answers, and a relay subscription made before the failure still
 * receives messages. The killed node is then started again: it rejoins as a replica and
 * work goes on.
 */
const stories = hnStories(6, "f");
let cluster: RedisClusterHandle;
let hn: Fake;
let h: Harness;
let token: string;

beforeAll(async () => {
  cluster = await startRedisCluster({ masters: 3, replicasPerMaster: 1, nodeTimeoutMs: 1000 });
  hn = await hackernewsFake((q) => (q.startsWith("Failover") ? stories : []));
  h = await createHarness({
    REDIS_URL: cluster.url,
    HACKERNEWS_API_URL: `${hn.url}/api/v1`,
    COLLECTOR_PAGE_SIZE: "3",
    COLLECTOR_MAX_PAGES: "2",
    COLLECTOR_MAX_COMMENTS: "0",
    COLLECTOR_REQUESTS_PER_SECOND: "1000",
  });
  h.startWorkers({ "collection.run.v1": collectionProcessor() });
  token = await h.token();
}, 120_000);
afterAll(async () => {
  // A node a failed assertion left down is started again, so the harness can clean up.
  await Promise.all(cluster?.nodes.filter((n) => !n.running).map((n) => n.start()) ?? []);
  await cluster?.waitHealthy(30_000).catch(() => undefined);
  await h?.close();
  await hn?.close();
  await cluster?.stop();
});

async function collect(name: string) {
  const entity = await newEntity(h, token, { name });
  // Enqueueing may be refused (503) for a moment while the cluster re-reads its slot map.
  const created = await until(async () => {
    const res = await createJob(h, token, {
      entity_id: entity.id,
      objective: `About ${name}`,
      platforms: ["hackernews"],
      collection_only: true,
    });
    return res.status === 200 ? res : undefined;
  }, 20_000);
  const done = await pollJob(h, token, created.body.job_id, undefined, 30_000);
  expect(done.status, JSON.stringify(done)).toBe("completed");
  expect(await contentRows(h, entity.id)).toHaveLength(stories.length);
}

describe("a Redis Cluster master killed", { timeout: 120_000 }, () => {
  it("fails over to its replica; jobs complete, the API answers and the relay delivers", async () => {
    await collect("Failover before");

    const victim: ClusterNode = await cluster.masterFor("{collection}");
    // An analysis channel whose shard is on the same master (sharded pub/sub follows the slot).
    let channel = "";
    for (let i = 0; i < 200 && !channel; i++) {
      const candidate = analysisChannel(h.config.REDIS_PREFIX, randomUUID());
      if ((await cluster.masterFor(candidate)).port === victim.port) channel = candidate;
    }
    expect(channel).not.toBe("");
    const received: string[] = [];
    const unsubscribe = await h.deps.pubsub.subscribe(channel, (m) => received.push(m));
    await publish(h.deps.redis, channel, "before");
    await until(async () => received.includes("before"));

    await victim.kill();
    await cluster.waitHealthy(30_000);
    const promoted = await cluster.masterFor("{collection}");
    expect(promoted.port).not.toBe(victim.port);

    await collect("Failover after");
    const health = await until(async () => {
      const res = await h.http.get("/agent/v1/health");
      return res.status === 200 ? res : undefined;
    }, 20_000);
    expect(health.body.dependencies.redis.status).toBe("ok");
    await until(async () => {
      await publish(h.deps.redis, channel, "after").catch(() => 0);
      return received.includes("after");
    }, 20_000);

    // The old master comes back as a replica of the promoted one; nothing changes for clients.
    await victim.start();
    await cluster.waitHealthy(30_000);
    expect((await cluster.masterFor("{collection}")).port).toBe(promoted.port);
    await collect("Failover restarted");
    await unsubscribe();
  });
});
