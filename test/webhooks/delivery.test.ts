import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deliveryJobId, recordJobEvent } from "../../src/delivery/webhooks/dispatch.js";
import { runAdminCommand } from "../../src/governance/admin/commands.js";
import { Queues } from "../../src/platform/queues.js";
import { webhookDeliverProcessor } from "../../workers/webhooks.js";
import { createHarness, type Harness } from "../helpers/harness.js";
import { awaitDelivery, deliveriesOf, jobEvent, newWorkspace, registerEndpoint, startReceiver, until } from "./support.js";

/**
 * Deliveries end to end: recordJobEvent → PostgreSQL rows → BullMQ → the real worker →
 * a local HTTP receiver. Retries run on a short schedule (base 50 ms: 50 ms, 300 ms, …) and
 * three attempts at most, so the last attempt comes within a second or two.
 */
let h: Harness;
const receivers: { close: () => Promise<void> }[] = [];
const receiver = async (...args: Parameters<typeof startReceiver>) => {
  const r = await startReceiver(...args);
  receivers.push(r);
  return r;
};

beforeAll(async () => {
  h = await createHarness({
    WEBHOOK_ALLOW_PRIVATE_URLS: "true",
    WEBHOOK_RETRY_BASE_MS: "50",
    WEBHOOK_TIMEOUT_MS: "400",
    WEBHOOK_MAX_ATTEMPTS: "3",
  });
  h.startWorkers({ "webhook.deliver.v1": webhookDeliverProcessor });
});
afterAll(async () => {
  await h?.close();
  await Promise.all(receivers.map((r) => r.close()));
});

/** The headers of a received request, as standardwebhooks' verify takes them. */
const webhookHeaders = (headers: Record<string, unknown>) => ({
  "webhook-id": String(headers["webhook-id"]),
  "webhook-timestamp": String(headers["webhook-timestamp"]),
  "webhook-signature": String(headers["webhook-signature"]),
});

describe("a delivery", () => {
  it("is signed as Standard Webhooks specifies: standardwebhooks verifies it with the secret shown at registration", async () => {
    const { token, workspaceId } = await newWorkspace(h);
    const r = await receiver(() => 200);
    const endpoint = await registerEndpoint(h, token, workspaceId, { url: r.url });
    const event = jobEvent(workspaceId, "collection_job", "completed");

    expect(await recordJobEvent(h.deps, event)).toBe(1);
    const [request] = await r.waitFor(1);
    if (!request) throw new Error("no request");
    expect(request.headers["content-type"]).toBe("application/json");
    const timestamp = Number(request.headers["webhook-timestamp"]);
    expect(Math.abs(timestamp - Date.now() / 1000)).toBeLessThan(30);
    expect(request.headers["webhook-signature"]).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);

    const verified = new Webhook(endpoint.secret).verify(request.body, webhookHeaders(request.headers));
    expect(verified).toEqual({
      type: "collection_job.completed",
      timestamp: event.occurredAt.toISOString(),
      data: { id: event.id, kind: "collection_job", status: "completed", workspace_id: workspaceId, ...event.data },
    });
    // Another secret, or a changed body, does not verify.
    const other = await registerEndpoint(h, token, workspaceId, { url: "http://127.0.0.1:9/unused", event_types: ["analysis.failed"] });
    expect(() => new Webhook(other.secret).verify(request.body, webhookHeaders(request.headers))).toThrow();
    expect(() =>
      new Webhook(endpoint.secret).verify(request.body.replace("completed", "failed"), webhookHeaders(request.headers)),
    ).toThrow();

    const delivery = await awaitDelivery(h, token, workspaceId, endpoint.id, (d) => d.status === "succeeded");
    expect(delivery).toMatchObject({
      message_id: request.headers["webhook-id"],
      event_type: "collection_job.completed",
      status: "succeeded",
      attempts: 1,
      last_status_code: 200,
      last_error: null,
      next_attempt_at: null,
    });
    expect(delivery.message_id).toMatch(/^msg_[0-9a-f]{32}$/);
    expect(delivery.delivered_at).not.toBeNull();
  });

  it("is retried after a 500 under the same webhook-id, and succeeds on the second attempt", async () => {
    const { token, workspaceId } = await newWorkspace(h);
    const r = await receiver((i) => (i === 0 ? 500 : 200));
    const endpoint = await registerEndpoint(h, token, workspaceId, { url: r.url });
    await recordJobEvent(h.deps, jobEvent(workspaceId, "analysis", "failed"));

    const [first, second] = await r.waitFor(2);
    if (!first || !second) throw new Error("expected two requests");
    expect(second.headers["webhook-id"]).toBe(first.headers["webhook-id"]);
    expect(second.body).toBe(first.body);
    expect(second.at - first.at).toBeGreaterThanOrEqual(45); // the first step of the schedule (50 ms)
    const wh = new Webhook(endpoint.secret);
    for (const req of [first, second]) expect(wh.verify(req.body, webhookHeaders(req.headers))).toMatchObject({ type: "analysis.failed" });

    const delivery = await awaitDelivery(h, token, workspaceId, endpoint.id, (d) => d.status === "succeeded");
    expect(delivery).toMatchObject({ attempts: 2, last_status_code: 200, last_error: null, event_type: "analysis.failed" });
    expect(r.received).toHaveLength(2);
  });

  it("that never gets an answer times out, is retried with its attempts recorded, and fails after the last attempt", async () => {
    const { token, workspaceId } = await newWorkspace(h);
    const r = await receiver(() => "hang");
    const endpoint = await registerEndpoint(h, token, workspaceId, { url: r.url });
    await recordJobEvent(h.deps, jobEvent(workspaceId, "workflow_run", "partial"));

    const retrying = await awaitDelivery(h, token, workspaceId, endpoint.id, (d) => d.attempts >= 1);
    expect(retrying).toMatchObject({ status: "retrying", last_status_code: null, last_error: "no answer within 400 ms" });
    expect(retrying.next_attempt_at).not.toBeNull();

    const failed = await awaitDelivery(h, token, workspaceId, endpoint.id, (d) => d.status === "failed");
    expect(failed).toMatchObject({ attempts: 3, last_error: "no answer within 400 ms", next_attempt_at: null, delivered_at: null });
    expect(r.received).toHaveLength(3);
    expect(new Set(r.received.map((q) => q.headers["webhook-id"])).size).toBe(1);
  });

  it("answered 500 every time fails after the last attempt with the status code recorded", async () => {
    const { token, workspaceId } = await newWorkspace(h);
    const r = await receiver(() => 503);
    const endpoint = await registerEndpoint(h, token, workspaceId, { url: r.url });
    await recordJobEvent(h.deps, jobEvent(workspaceId, "note_sync", "failed"));
    const failed = await awaitDelivery(h, token, workspaceId, endpoint.id, (d) => d.status === "failed");
    expect(failed).toMatchObject({ attempts: 3, last_status_code: 503, last_error: "the endpoint answered HTTP 503" });
    expect(r.received).toHaveLength(3);
  });
});

describe("recordJobEvent", () => {
  it("records the same event once: a second call creates no delivery and sends nothing more", async () => {
    const { token, workspaceId } = await newWorkspace(h);
    const r = await receiver(() => 204);
    const endpoint = await registerEndpoint(h, token, workspaceId, { url: r.url });
    const event = jobEvent(workspaceId, "collection_job", "cancelled");

    expect(await recordJobEvent(h.deps, event)).toBe(1);
    await awaitDelivery(h, token, workspaceId, endpoint.id, (d) => d.status === "succeeded");
    // The lifecycle may announce the same end twice (a retried step); a later time changes nothing.
    expect(await recordJobEvent(h.deps, { ...event, occurredAt: new Date(Date.now() + 1000) })).toBe(0);
    expect(await recordJobEvent(h.deps, event)).toBe(0);

    expect(await h.deps.db.webhookDelivery.count({ where: { endpointId: endpoint.id } })).toBe(1);
    const counts = await h.deps.queues.get("webhooks").getJobCounts("waiting", "delayed", "active", "prioritized");
    expect(Object.values(counts).reduce((a, b) => a + b, 0)).toBe(0);
    expect(r.received).toHaveLength(1);
    expect(await deliveriesOf(h, token, workspaceId, endpoint.id)).toHaveLength(1);
  });

  it("delivers only to endpoints that take the event's type, and nothing to other workspaces", async () => {
    const { token, workspaceId } = await newWorkspace(h);
    const other = await newWorkspace(h);
    const all = await receiver(() => 200);
    const failuresOnly = await receiver(() => 200);
    const stranger = await receiver(() => 200);
    const allEndpoint = await registerEndpoint(h, token, workspaceId, { url: all.url });
    const failEndpoint = await registerEndpoint(h, token, workspaceId, {
      url: failuresOnly.url,
      event_types: ["analysis.failed", "collection_job.failed"],
    });
    await registerEndpoint(h, other.token, other.workspaceId, { url: stranger.url });

    expect(await recordJobEvent(h.deps, jobEvent(workspaceId, "analysis", "completed"))).toBe(1);
    expect(await recordJobEvent(h.deps, jobEvent(workspaceId, "analysis", "failed"))).toBe(2);
    await all.waitFor(2);
    await failuresOnly.waitFor(1);
    await until(async () => {
      const done = await h.deps.db.webhookDelivery.count({ where: { endpoint: { workspaceId }, status: "succeeded" } });
      return done === 3;
    });
    expect(all.received.map((q) => JSON.parse(q.body).type).sort()).toEqual(["analysis.completed", "analysis.failed"]);
    expect(failuresOnly.received.map((q) => JSON.parse(q.body).type)).toEqual(["analysis.failed"]);
    expect((await deliveriesOf(h, token, workspaceId, failEndpoint.id)).map((d) => d.event_type)).toEqual(["analysis.failed"]);
    expect(await deliveriesOf(h, token, workspaceId, allEndpoint.id)).toHaveLength(2);
    expect(stranger.received).toHaveLength(0);
    expect(await h.deps.db.webhookDelivery.count({ where: { endpoint: { workspaceId: other.workspaceId } } })).toBe(0);
  });

  it("keeps a delivery pending when the queue refuses it, and requeue-webhooks sends it later", async () => {
    const { token, workspaceId } = await newWorkspace(h);
    const r = await receiver(() => 200);
    const endpoint = await registerEndpoint(h, token, workspaceId, { url: r.url });
    const event = jobEvent(workspaceId, "collection_job", "failed");

    // A queue whose Redis does not answer (nothing listens on port 9).
    const down = new Queues({ redisUrl: "redis://127.0.0.1:9", prefix: h.config.REDIS_PREFIX });
    try {
      expect(await recordJobEvent({ ...h.deps, queues: down }, event)).toBe(0);
    } finally {
      await down.close();
    }
    const [pending] = await deliveriesOf(h, token, workspaceId, endpoint.id);
    expect(pending).toMatchObject({ status: "pending", attempts: 0, last_attempt_at: null });
    expect(r.received).toHaveLength(0);

    expect(await runAdminCommand(h.deps, ["requeue-webhooks"])).toMatch(/requeued [1-9]/);
    const delivered = await awaitDelivery(h, token, workspaceId, endpoint.id, (d) => d.status === "succeeded");
    expect(delivered).toMatchObject({ id: pending?.id, attempts: 1 });
    expect(r.received).toHaveLength(1);
    // Nothing open is left to requeue for this endpoint.
    expect(await runAdminCommand(h.deps, ["requeue-webhooks"])).not.toContain("requeued 1");
  });

  it("queues a pending delivery again when the same event is recorded again", async () => {
    const { token, workspaceId } = await newWorkspace(h);
    const r = await receiver(() => 200);
    const endpoint = await registerEndpoint(h, token, workspaceId, { url: r.url });
    const event = jobEvent(workspaceId, "analysis", "cancelled");
    const down = new Queues({ redisUrl: "redis://127.0.0.1:9", prefix: h.config.REDIS_PREFIX });
    try {
      expect(await recordJobEvent({ ...h.deps, queues: down }, event)).toBe(0);
    } finally {
      await down.close();
    }
    expect(await recordJobEvent(h.deps, event)).toBe(0); // no new delivery; the pending one is queued
    await awaitDelivery(h, token, workspaceId, endpoint.id, (d) => d.status === "succeeded");
    expect(r.received).toHaveLength(1);
  });

  it("deleting an endpoint ends its open deliveries as failed, sends nothing more and records nothing new for it", async () => {
    const { token, workspaceId } = await newWorkspace(h);
    const r = await receiver(() => 200);
    const endpoint = await registerEndpoint(h, token, workspaceId, { url: r.url });
    // A delivery that is open and not yet attempted when the endpoint is deleted.
    const down = new Queues({ redisUrl: "redis://127.0.0.1:9", prefix: h.config.REDIS_PREFIX });
    try {
      await recordJobEvent({ ...h.deps, queues: down }, jobEvent(workspaceId, "workflow_run", "completed"));
    } finally {
      await down.close();
    }
    const del = await h.http.delete(`/api/workspaces/${workspaceId}/webhooks/${endpoint.id}`).set("Authorization", `Bearer ${token}`);
    expect(del.status).toBe(204);

    const [row, ...more] = await h.deps.db.webhookDelivery.findMany({ where: { endpointId: endpoint.id } });
    if (!row) throw new Error("no delivery");
    expect(more).toHaveLength(0);
    expect(row).toMatchObject({ status: "failed", attempts: 0, lastError: "the endpoint was deleted", nextAttemptAt: null });
    expect(await runAdminCommand(h.deps, ["requeue-webhooks"])).not.toMatch(/requeued [1-9]/);
    // A job queued before the deletion runs and ends with nothing to do.
    await h.deps.queues.enqueue("webhook.deliver.v1", { deliveryId: row.id }, { jobId: deliveryJobId(row.id) });
    const job = await until(async () => {
      const found = await h.deps.queues.get("webhooks").getJob(deliveryJobId(row.id));
      // finishedOn and returnvalue are written together when the job completes; reading the
      // state separately could see "completed" on a hash fetched a moment before.
      return found?.finishedOn ? found : undefined;
    });
    expect(job.returnvalue).toEqual({ kind: "nothing_to_do" });
    expect(r.received).toHaveLength(0);
    expect(await recordJobEvent(h.deps, jobEvent(workspaceId, "analysis", "completed"))).toBe(0);
  });
});
