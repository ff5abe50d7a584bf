import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { recordJobEvent } from "../../src/delivery/webhooks/dispatch.js";
import { webhookDeliverProcessor } from "../../workers/webhooks.js";
import { createHarness, type Harness } from "../helpers/harness.js";
import { jobEvent, newWorkspace, registerEndpoint, startReceiver, startSilentServer } from "./support.js";

/**
 * Fairness between workspaces: one workspace's 12 endpoints never answer (each attempt waits out
 * a 5 s timeout) and 48 of its deliveries are queued, more than the worker's 32 slots; another
 * workspace's healthy endpoint still gets each of its deliveries within 2 s. Default limits.
 */
let h: Harness;
const closers: { close: () => Promise<void> }[] = [];

beforeAll(async () => {
  h = await createHarness({ WEBHOOK_ALLOW_PRIVATE_URLS: "true", WEBHOOK_TIMEOUT_MS: "5000" });
  // The webhook queue's default concurrency (QUEUE_DEFAULT_CONCURRENCY).
  h.startWorkers({ "webhook.deliver.v1": webhookDeliverProcessor }, 32);
});
afterAll(async () => {
  await h?.close();
  await Promise.all(closers.map((c) => c.close()));
});

describe("deliveries of one workspace", () => {
  it("do not wait behind another workspace's never-answering endpoints", { timeout: 60_000 }, async () => {
    const silent = await startSilentServer();
    closers.push(silent);
    const slow = await newWorkspace(h);
    for (let i = 0; i < 12; i++) await registerEndpoint(h, slow.token, slow.workspaceId, { url: silent.urlFor(`/slow/${i}`) });
    for (let i = 0; i < 4; i++) expect(await recordJobEvent(h.deps, jobEvent(slow.workspaceId, "collection_job", "completed"))).toBe(12);

    const healthy = await newWorkspace(h);
    const r = await startReceiver(() => 200);
    closers.push(r);
    await registerEndpoint(h, healthy.token, healthy.workspaceId, { url: r.url });

    const latencies: number[] = [];
    for (let i = 0; i < 5; i++) {
      const recordedAt = Date.now();
      expect(await recordJobEvent(h.deps, jobEvent(healthy.workspaceId, "analysis", "completed"))).toBe(1);
      const received = await r.waitFor(i + 1, 10_000);
      latencies.push((received[i]?.at ?? Number.POSITIVE_INFINITY) - recordedAt);
      // Meanwhile the slow workspace holds its 4 slots.
      expect(silent.openNow()).toBe(4);
    }
    expect(Math.max(...latencies), `latencies ${latencies.join(", ")} ms`).toBeLessThan(2000);

    // Past the first timeouts, the slow workspace's waiting deliveries take the freed slots, 4 at a time.
    const deadline = Date.now() + 15_000;
    while (silent.stats.arrived < 8 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(silent.stats.arrived).toBeGreaterThanOrEqual(8);
    expect(silent.stats.maxOpen).toBe(4);
    expect(Math.max(...silent.stats.maxOpenPerPath.values())).toBeLessThanOrEqual(2);
  });
});
