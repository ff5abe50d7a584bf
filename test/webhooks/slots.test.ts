import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deliveryJobId, recordJobEvent } from "../../src/delivery/webhooks/dispatch.js";
import { takeSlot } from "../../src/delivery/webhooks/slots.js";
import { webhookDeliverProcessor } from "../../workers/webhooks.js";
import { createHarness, type Harness } from "../helpers/harness.js";
import { jobEvent, newWorkspace, registerEndpoint, startReceiver, startSilentServer, until } from "./support.js";

/**
 * Delivery slots with the default limits (2 attempts in flight per endpoint, 4 per workspace),
 * against a local server that accepts connections and never answers (attempts time out after
 * 600 ms). The breaker is off here, so the endpoints stay busy.
 */
let h: Harness;
const closers: { close: () => Promise<void> }[] = [];
/** A silent server of the test's own, so attempts still running for an earlier test do not count. */
const silentServer = async () => {
  const server = await startSilentServer();
  closers.push(server);
  return server;
};

beforeAll(async () => {
  h = await createHarness({
    WEBHOOK_ALLOW_PRIVATE_URLS: "true",
    WEBHOOK_TIMEOUT_MS: "600",
    WEBHOOK_RETRY_BASE_MS: "20",
    WEBHOOK_PAUSE_AFTER_FAILURES: "0",
    WEBHOOK_DISABLE_AFTER_FAILURES: "0",
  });
  h.startWorkers({ "webhook.deliver.v1": webhookDeliverProcessor }, 16);
});
afterAll(async () => {
  await h?.close();
  await Promise.all(closers.map((c) => c.close()));
});

describe("delivery slots", () => {
  it("never has more than 2 attempts open on one endpoint; the others wait without using up attempts", async () => {
    const { token, workspaceId } = await newWorkspace(h);
    const silent = await silentServer();
    const path = `/one-endpoint/${randomUUID()}`;
    const endpoint = await registerEndpoint(h, token, workspaceId, { url: silent.urlFor(path) });
    for (let i = 0; i < 8; i++) await recordJobEvent(h.deps, jobEvent(workspaceId, "analysis", "completed"));

    // Every delivery gets its first attempt, two at a time (a parked one is woken by a release).
    const rows = await until(async () => {
      const ds = await h.deps.db.webhookDelivery.findMany({ where: { endpointId: endpoint.id } });
      return ds.length === 8 && ds.every((d) => d.attempts >= 1) && ds;
    }, 20_000);
    expect(silent.stats.maxOpenPerPath.get(path)).toBe(2);
    expect(silent.stats.arrivedPerPath.get(path)).toBeGreaterThanOrEqual(8);

    // Deferred runs count no attempt: a job moved back to delayed has as many attempts as its row.
    const queue = h.deps.queues.get("webhooks");
    let deferrals = 0;
    for (const row of rows) {
      const job = await queue.getJob(deliveryJobId(row.id));
      if (!job) throw new Error(`no job for delivery ${row.id}`);
      deferrals += job.attemptsStarted - job.attemptsMade;
      expect(job.attemptsMade).toBeLessThanOrEqual(row.attempts);
      expect(job.attemptsMade).toBeGreaterThanOrEqual(row.attempts - 1);
    }
    expect(deferrals).toBeGreaterThan(0);
    expect(silent.stats.maxOpenPerPath.get(path)).toBe(2);
  });

  it("never has more than 4 attempts open for one workspace, spread over its endpoints", async () => {
    const { token, workspaceId } = await newWorkspace(h);
    const silent = await silentServer();
    const paths = Array.from({ length: 4 }, (_, i) => `/workspace/${randomUUID()}/${i}`);
    for (const path of paths) await registerEndpoint(h, token, workspaceId, { url: silent.urlFor(path) });
    for (let i = 0; i < 4; i++) await recordJobEvent(h.deps, jobEvent(workspaceId, "workflow_run", "completed"));

    await until(async () => paths.every((p) => (silent.stats.arrivedPerPath.get(p) ?? 0) >= 3), 20_000);
    const most = Math.max(...paths.map((p) => silent.stats.maxOpenPerPath.get(p) ?? 0));
    expect(most).toBeLessThanOrEqual(2);
    expect(silent.stats.maxOpen).toBe(4);
  });

  it("frees the slots of a worker that died holding them once their leases lapse", async () => {
    const { token, workspaceId } = await newWorkspace(h);
    const r = await startReceiver(() => 200);
    closers.push(r);
    const endpoint = await registerEndpoint(h, token, workspaceId, { url: r.url });
    // Two leases taken and never released, as by a worker killed mid-attempt.
    for (let i = 0; i < 2; i++) {
      expect(await takeSlot(h.deps, { workspaceId, endpointId: endpoint.id, jobId: `dead-${i}` })).toBeDefined();
    }
    expect(await takeSlot(h.deps, { workspaceId, endpointId: endpoint.id, jobId: "third" })).toBeUndefined();
    const recordedAt = Date.now();
    expect(await recordJobEvent(h.deps, jobEvent(workspaceId, "note_sync", "failed"))).toBe(1);

    // Leases outlive the attempt's timeout by 5 s (5.6 s here); the parked delivery's fallback is 1–2 leases.
    const [request] = await r.waitFor(1, 15_000);
    expect((request?.at ?? 0) - recordedAt).toBeGreaterThanOrEqual(5600 - 100);
    const row = await until(async () => {
      const [d] = await h.deps.db.webhookDelivery.findMany({ where: { endpointId: endpoint.id } });
      return d?.status === "succeeded" && d;
    });
    expect(row.attempts).toBe(1);
    expect(r.received).toHaveLength(1);
  }, 30_000);
});
