import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { recordJobEvent } from "../../src/delivery/webhooks/dispatch.js";
import { webhookDeliverProcessor } from "../../workers/webhooks.js";
import { createHarness, type Harness } from "../helpers/harness.js";
import {
  addMember,
  awaitDelivery,
  bearer,
  deliveriesOf,
  endpointOf,
  jobEvent,
  newWorkspace,
  registerEndpoint,
  startReceiver,
  until,
} from "./support.js";

/**
 * The circuit breaker end to end, on a short scale: 3 failed attempts in a row pause an endpoint
 * for 1.5 s (doubling, at most 3 s), 6 disable it. Retries come quickly (base 20 ms) and a delivery
 * has 10 attempts, so the breaker, not the schedule, decides when attempts stop.
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
    WEBHOOK_RETRY_BASE_MS: "20",
    WEBHOOK_TIMEOUT_MS: "400",
    WEBHOOK_PAUSE_AFTER_FAILURES: "3",
    WEBHOOK_PAUSE_MS: "1500",
    WEBHOOK_PAUSE_MAX_MS: "3000",
    WEBHOOK_DISABLE_AFTER_FAILURES: "6",
  });
  h.startWorkers({ "webhook.deliver.v1": webhookDeliverProcessor }, 8);
});
afterAll(async () => {
  await h?.close();
  await Promise.all(receivers.map((r) => r.close()));
});

const patch = (token: string, workspaceId: string, endpointId: string, body: unknown) =>
  h.http
    .patch(`/api/workspaces/${workspaceId}/webhooks/${endpointId}`)
    .set(bearer(token))
    .send(body as object);
const auditOf = async (token: string, workspaceId: string) => {
  const res = await h.http.get(`/api/workspaces/${workspaceId}/audit`).set(bearer(token));
  expect(res.status).toBe(200);
  return res.body.entries as { actor_id: string | null; action: string; target: string; detail: Record<string, unknown> }[];
};

describe("an endpoint that keeps failing", () => {
  it("is paused after 3 failures (its deliveries wait, no attempt counted), disabled after 6 (open deliveries failed), and an admin enables it", async () => {
    const { token, workspaceId } = await newWorkspace(h);
    let answer = 503;
    const r = await receiver(() => answer);
    const endpoint = await registerEndpoint(h, token, workspaceId, { url: r.url });
    for (let i = 0; i < 4; i++) await recordJobEvent(h.deps, jobEvent(workspaceId, "analysis", "failed"));

    // Paused: three failures (and at most one attempt that was already under way).
    const paused = await until(async () => {
      const e = await endpointOf(h, token, workspaceId, endpoint.id);
      return e.state === "paused" ? e : undefined;
    });
    expect(paused.consecutive_failures).toBeGreaterThanOrEqual(3);
    expect(paused.consecutive_failures).toBeLessThanOrEqual(4);
    expect(paused.disabled_reason).toBeNull();
    const pausedUntil = Date.parse(paused.paused_until ?? "");
    expect(pausedUntil - Date.now()).toBeGreaterThan(1000);

    // While paused nothing is sent, and waiting is not an attempt. (An attempt already under way ends first.)
    await new Promise((resolve) => setTimeout(resolve, 100));
    const sentAtPause = r.received.length;
    await new Promise((resolve) => setTimeout(resolve, pausedUntil - Date.now() - 150));
    expect(r.received).toHaveLength(sentAtPause);
    const during = await deliveriesOf(h, token, workspaceId, endpoint.id);
    expect(during).toHaveLength(4);
    expect(during.reduce((n, d) => n + d.attempts, 0)).toBe(sentAtPause);
    for (const d of during) {
      expect(d.status).toMatch(/^(pending|retrying)$/);
      expect(Date.parse(d.next_attempt_at ?? "")).toBeGreaterThanOrEqual(pausedUntil);
    }
    // After the pause the endpoint is tried again.
    await r.waitFor(sentAtPause + 1, 5000);
    expect(r.received.at(sentAtPause)?.at).toBeGreaterThanOrEqual(pausedUntil - 5);

    // Disabled at the sixth failure: the state and reason are readable, open deliveries ended.
    const disabled = await until(async () => {
      const e = await endpointOf(h, token, workspaceId, endpoint.id);
      return e.state === "disabled" ? e : undefined;
    }, 15_000);
    expect(disabled).toMatchObject({ consecutive_failures: 6, paused_until: null, disabled_at: expect.any(String) });
    expect(disabled.disabled_reason).toBe("6 failed attempts in a row; the last: the endpoint answered HTTP 503");
    const ended = await until(async () => {
      const ds = await deliveriesOf(h, token, workspaceId, endpoint.id);
      return ds.every((d) => d.status === "failed") && ds;
    });
    for (const d of ended) {
      expect(d.last_error).toBe(`the endpoint was disabled: ${disabled.disabled_reason}`);
      expect(d.next_attempt_at).toBeNull();
    }
    const listed = await h.http.get(`/api/workspaces/${workspaceId}/webhooks`).set(bearer(token));
    expect(listed.body.endpoints).toEqual([expect.objectContaining({ id: endpoint.id, state: "disabled", consecutive_failures: 6 })]);
    const [entry] = (await auditOf(token, workspaceId)).filter((e) => e.action === "webhook.disabled");
    expect(entry).toEqual(
      expect.objectContaining({
        actor_id: null,
        target: endpoint.id,
        detail: { consecutive_failures: 6, reason: disabled.disabled_reason },
      }),
    );

    // Disabled: new job ends are not recorded for it, and nothing more is sent.
    const sentAtDisable = r.received.length;
    expect(await recordJobEvent(h.deps, jobEvent(workspaceId, "collection_job", "completed"))).toBe(0);
    expect(await h.deps.db.webhookDelivery.count({ where: { endpointId: endpoint.id } })).toBe(4);

    // Viewers and editors may not enable it; a bad body is a 422; an admin enables it.
    const viewer = await addMember(h, token, workspaceId, "viewer");
    const editor = await addMember(h, token, workspaceId, "editor");
    const admin = await addMember(h, token, workspaceId, "admin");
    for (const who of [viewer, editor]) {
      const refused = await patch(who.token, workspaceId, endpoint.id, { state: "enabled" });
      expect(refused.status).toBe(403);
      expect(refused.body.code).toBe("forbidden");
    }
    for (const body of [{}, { state: "paused" }, { state: "disabled" }, { enabled: true }, { state: true }]) {
      const invalid = await patch(admin.token, workspaceId, endpoint.id, body);
      expect(invalid.status, JSON.stringify(body)).toBe(422);
      expect(invalid.body.detail[0].loc).toEqual(["body", "state"]);
    }
    expect((await endpointOf(h, token, workspaceId, endpoint.id)).state).toBe("disabled");

    const enabled = await patch(admin.token, workspaceId, endpoint.id, { state: "enabled" });
    expect(enabled.status, JSON.stringify(enabled.body)).toBe(200);
    expect(enabled.body).toMatchObject({
      id: endpoint.id,
      state: "enabled",
      consecutive_failures: 0,
      paused_until: null,
      disabled_at: null,
      disabled_reason: null,
    });
    const again = await patch(admin.token, workspaceId, endpoint.id, { state: "enabled" });
    expect(again.body).toEqual(enabled.body);
    const enables = (await auditOf(token, workspaceId)).filter((e) => e.action === "webhook.enabled");
    expect(enables).toEqual([
      expect.objectContaining({
        actor_id: admin.userId,
        target: endpoint.id,
        detail: { previous_state: "disabled", consecutive_failures: 6 },
      }),
    ]);

    // Job ends reach it again; the deliveries the disable ended stay failed.
    expect(r.received).toHaveLength(sentAtDisable);
    answer = 200;
    expect(await recordJobEvent(h.deps, jobEvent(workspaceId, "workflow_run", "completed"))).toBe(1);
    await until(async () => {
      const ds = await deliveriesOf(h, token, workspaceId, endpoint.id);
      return ds.some((d) => d.status === "succeeded") && ds;
    });
    const after = await deliveriesOf(h, token, workspaceId, endpoint.id);
    expect(after.filter((d) => d.status === "failed")).toHaveLength(4);
  });

  it("is reset by any success: a failure count below the threshold goes back to 0", async () => {
    const { token, workspaceId } = await newWorkspace(h);
    const r = await receiver((i) => (i < 2 ? 500 : 204));
    const endpoint = await registerEndpoint(h, token, workspaceId, { url: r.url });
    await recordJobEvent(h.deps, jobEvent(workspaceId, "note_sync", "completed"));
    const delivered = await awaitDelivery(h, token, workspaceId, endpoint.id, (d) => d.status === "succeeded");
    expect(delivered.attempts).toBe(3);
    // The endpoint's count is reset just after the delivery's success is recorded.
    const reset = await until(async () => {
      const record = await endpointOf(h, token, workspaceId, endpoint.id);
      return record.consecutive_failures === 0 ? record : undefined;
    }, 5_000);
    expect(reset).toMatchObject({ state: "enabled", consecutive_failures: 0 });
  });

  it("answers 404 to a PATCH of another workspace's endpoint", async () => {
    const a = await newWorkspace(h);
    const b = await newWorkspace(h);
    const endpoint = await registerEndpoint(h, a.token, a.workspaceId, { url: "http://127.0.0.1:9/unused" });
    for (const res of [
      await patch(b.token, a.workspaceId, endpoint.id, { state: "enabled" }),
      await patch(b.token, b.workspaceId, endpoint.id, { state: "enabled" }),
    ]) {
      expect(res.status).toBe(404);
      expect(res.body.code).toBe("not_found");
    }
  });
});
