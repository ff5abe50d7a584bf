import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { concurrencyOf, loadConfig, queueConcurrency } from "../../src/platform/config.js";
import type { QueueName } from "../../src/platform/queues.js";
import { startWorkers } from "../../workers/runtime.js";
import { createHarness, type Harness } from "../helpers/harness.js";
import { until } from "../reliability/support/processes.js";

describe("WORKER_QUEUE_CONCURRENCY", () => {
  it("parses queue=number pairs and names what is wrong", () => {
    const base = { AUTH_JWT_SECRET: "a-secret-of-16-chars" };
    expect(queueConcurrency(loadConfig(base).WORKER_QUEUE_CONCURRENCY).byQueue).toEqual({});
    const config = loadConfig({ ...base, WORKER_QUEUE_CONCURRENCY: " webhooks=32 , analysis = 2," });
    expect(queueConcurrency(config.WORKER_QUEUE_CONCURRENCY).byQueue).toEqual({ webhooks: 32, analysis: 2 });
    expect(() => loadConfig({ ...base, WORKER_QUEUE_CONCURRENCY: "webhook=3" })).toThrow(
      /WORKER_QUEUE_CONCURRENCY: 'webhook=3' names no queue: write queue=number with a queue of collection, analysis/,
    );
    expect(() => loadConfig({ ...base, WORKER_QUEUE_CONCURRENCY: "webhooks=0" })).toThrow(
      /'webhooks=0': the concurrency must be a whole number from 1 to 256/,
    );
    expect(() => loadConfig({ ...base, WORKER_QUEUE_CONCURRENCY: "webhooks" })).toThrow(/'webhooks' names no queue/);
  });

  it("gives the webhooks queue 32 slots unless the setting names it; the other queues WORKER_CONCURRENCY", () => {
    const base = { AUTH_JWT_SECRET: "a-secret-of-16-chars" };
    const defaults = loadConfig(base);
    expect([concurrencyOf(defaults, "webhooks"), concurrencyOf(defaults, "analysis")]).toEqual([32, 4]);
    const named = loadConfig({ ...base, WORKER_CONCURRENCY: "8", WORKER_QUEUE_CONCURRENCY: "webhooks=12" });
    expect([concurrencyOf(named, "webhooks"), concurrencyOf(named, "collection")]).toEqual([12, 8]);
  });

  describe("in a worker process", () => {
    let h: Harness;
    beforeAll(async () => {
      h = await createHarness({ WORKER_CONCURRENCY: "1", WORKER_QUEUE_CONCURRENCY: "webhooks=4" });
    });
    afterAll(() => h.close());

    it("runs as many jobs of a queue at once as its own setting says, the others as WORKER_CONCURRENCY", async () => {
      const running: Record<string, number> = {};
      const most: Record<string, number> = {};
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      const hold = (queue: QueueName) => async () => {
        running[queue] = (running[queue] ?? 0) + 1;
        most[queue] = Math.max(most[queue] ?? 0, running[queue]);
        await gate;
        running[queue] -= 1;
      };
      const handles = startWorkers(h.deps, { "webhook.deliver.v1": hold("webhooks"), "collection.run.v1": hold("collection") });
      try {
        for (let i = 0; i < 6; i++) await h.deps.queues.enqueue("webhook.deliver.v1", { deliveryId: randomUUID() });
        for (let i = 0; i < 3; i++) await h.deps.queues.enqueue("collection.run.v1", { jobId: randomUUID() });
        await until("both queues busy", async () => running.webhooks === 4 && running.collection === 1);
        // Time for a worker with more slots to take more jobs: none does.
        await new Promise((r) => setTimeout(r, 500));
        expect(most).toEqual({ webhooks: 4, collection: 1 });
      } finally {
        release();
        await handles.close();
      }
    });
  });
});
