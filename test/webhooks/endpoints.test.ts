import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { recordJobEvent } from "../../src/delivery/webhooks/dispatch.js";
import { secretBinding } from "../../src/delivery/webhooks/service.js";
import { generateSecret } from "../../src/delivery/webhooks/signing.js";
import { secretBoxFor } from "../../src/platform/secrets.js";
import { webhookDeliverProcessor } from "../../workers/webhooks.js";
import { createHarness, type Harness } from "../helpers/harness.js";
import { awaitDelivery, bearer, jobEvent, newWorkspace, registerEndpoint, startReceiver } from "./support.js";

/**
 * Registering, reading and deleting webhook endpoints over HTTP, with the deployment's default
 * policy (private URLs refused).
 */
let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(async () => {
  await h?.close();
});

const PUBLIC_URL = "https://93.184.215.14/hooks/research";

describe("registering an endpoint", () => {
  it("answers the signing secret once; list and get never show it, and it is stored sealed", async () => {
    const { token, workspaceId } = await newWorkspace(h);
    const res = await h.http
      .post(`/api/workspaces/${workspaceId}/webhooks`)
      .set(bearer(token))
      .send({ url: PUBLIC_URL, event_types: ["analysis.completed", "analysis.completed", "analysis.failed"], description: " CRM sync " });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body).toEqual({
      id: expect.any(String),
      workspace_id: workspaceId,
      url: PUBLIC_URL,
      description: "CRM sync",
      event_types: ["analysis.completed", "analysis.failed"],
      created_at: expect.any(String),
      state: "enabled",
      consecutive_failures: 0,
      paused_until: null,
      disabled_at: null,
      disabled_reason: null,
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]+={0,2}$/),
    });
    const secret = res.body.secret as string;
    expect(Buffer.from(secret.slice("whsec_".length), "base64").length).toBeGreaterThanOrEqual(24);

    const list = await h.http.get(`/api/workspaces/${workspaceId}/webhooks`).set(bearer(token));
    expect(list.status).toBe(200);
    const { secret: _shown, ...record } = res.body;
    expect(list.body).toEqual({ endpoints: [record] });
    const one = await h.http.get(`/api/workspaces/${workspaceId}/webhooks/${res.body.id}`).set(bearer(token));
    expect(one.status).toBe(200);
    expect(one.body).toEqual(record);
    expect(JSON.stringify([list.body, one.body])).not.toContain(secret.slice(6));

    const row = await h.deps.db.webhookEndpoint.findUniqueOrThrow({ where: { id: res.body.id } });
    expect(row.secretSealed).toMatch(/^v1\./);
    expect(row.secretSealed).not.toContain(secret.slice(6));
  });

  it("takes every event type when event_types is absent, null or empty", async () => {
    const { token, workspaceId } = await newWorkspace(h);
    for (const event_types of [undefined, null, []]) {
      const created = await registerEndpoint(h, token, workspaceId, { url: PUBLIC_URL, event_types });
      expect(created.event_types).toEqual([]);
    }
  });

  it("accepts a key with scope * and refuses a key without it", async () => {
    const { token, workspaceId } = await newWorkspace(h);
    const key = async (scopes: string[]) => {
      const res = await h.http
        .post("/api/user/keys")
        .set(bearer(token))
        .send({ name: scopes.join(","), scopes });
      expect(res.status).toBe(201);
      return res.body.raw_key as string;
    };
    const full = await key(["*"]);
    const created = await h.http.post(`/api/workspaces/${workspaceId}/webhooks`).set("X-API-Key", full).send({ url: PUBLIC_URL });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const ingestOnly = await key(["ingest"]);
    const refused = await h.http.get(`/api/workspaces/${workspaceId}/webhooks`).set("X-API-Key", ingestOnly);
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe("insufficient_scope");
    const anonymous = await h.http.get(`/api/workspaces/${workspaceId}/webhooks`);
    expect(anonymous.status).toBe(401);
  });
});

describe("input errors are 422 in the documented shape", () => {
  const cases: [string, Record<string, unknown>, (string | number)[]][] = [
    ["missing url", { event_types: [] }, ["body", "url"]],
    ["not a URL", { url: "hooks please" }, ["body", "url"]],
    ["ftp URL", { url: "ftp://93.184.215.14/x" }, ["body", "url"]],
    ["javascript URL", { url: "javascript:alert(1)" }, ["body", "url"]],
    ["URL with credentials", { url: "https://user:pw@93.184.215.14/x" }, ["body", "url"]],
    ["unknown event type", { url: PUBLIC_URL, event_types: ["collection_job.completed", "job.done"] }, ["body", "event_types", 1]],
    ["event_types not a list", { url: PUBLIC_URL, event_types: "analysis.failed" }, ["body", "event_types"]],
    ["description too long", { url: PUBLIC_URL, description: "x".repeat(501) }, ["body", "description"]],
  ];
  for (const [name, body, loc] of cases) {
    it(name, async () => {
      const { token, workspaceId } = await newWorkspace(h);
      const res = await h.http.post(`/api/workspaces/${workspaceId}/webhooks`).set(bearer(token)).send(body);
      expect(res.status, JSON.stringify(res.body)).toBe(422);
      expect(res.body.detail).toContainEqual({ loc, msg: expect.any(String), type: expect.any(String) });
      expect(await h.deps.db.webhookEndpoint.count({ where: { workspaceId } })).toBe(0);
    });
  }

  it("refuses a bad page size on the delivery list", async () => {
    const { token, workspaceId } = await newWorkspace(h);
    const endpoint = await registerEndpoint(h, token, workspaceId, { url: PUBLIC_URL });
    const res = await h.http.get(`/api/workspaces/${workspaceId}/webhooks/${endpoint.id}/deliveries?limit=0`).set(bearer(token));
    expect(res.status).toBe(422);
    expect(res.body.detail[0].loc).toEqual(["query", "limit"]);
  });
});

describe("private targets", () => {
  for (const url of [
    "http://127.0.0.1:8080/hook",
    "http://10.1.2.3/hook",
    "http://192.168.0.10/hook",
    "http://169.254.169.254/latest/meta-data",
    "http://[::1]:8080/hook",
    "http://[::ffff:127.0.0.1]/hook",
    "http://localhost:3000/hook",
  ]) {
    it(`refuses ${url} at registration without WEBHOOK_ALLOW_PRIVATE_URLS`, async () => {
      const { token, workspaceId } = await newWorkspace(h);
      const res = await h.http.post(`/api/workspaces/${workspaceId}/webhooks`).set(bearer(token)).send({ url });
      expect(res.status, JSON.stringify(res.body)).toBe(422);
      expect(res.body.detail).toEqual([
        { loc: ["body", "url"], msg: expect.stringMatching(/not allowed.*not a public address/), type: "value_error" },
      ]);
    });
  }
});

describe("private targets at delivery time", () => {
  it("fails a delivery to a private address without retrying, with the reason recorded", async () => {
    h.startWorkers({ "webhook.deliver.v1": webhookDeliverProcessor });
    const { token, workspaceId } = await newWorkspace(h);
    const r = await startReceiver(() => 200);
    try {
      // An endpoint stored when its name still resolved to a public address, or before the
      // operator turned WEBHOOK_ALLOW_PRIVATE_URLS off: it now points at this machine.
      const id = randomUUID();
      const box = secretBoxFor(h.config);
      if (!box) throw new Error("SECRETS_KEY is set in tests");
      await h.deps.db.webhookEndpoint.create({
        data: { id, workspaceId, url: r.url, secretSealed: box.seal(generateSecret(), secretBinding(id)) },
      });
      expect(await recordJobEvent(h.deps, jobEvent(workspaceId))).toBe(1);
      const failed = await awaitDelivery(h, token, workspaceId, id, (d) => d.status === "failed");
      expect(failed).toMatchObject({ attempts: 1, last_status_code: null, next_attempt_at: null });
      expect(failed.last_error).toMatch(/^refused by the outbound address policy: .*127\.0\.0\.1.*not a public address/);
      expect(r.received).toHaveLength(0);
    } finally {
      await r.close();
    }
  });
});

describe("tenancy", () => {
  it("answers 404 for another workspace, for its endpoints, and for unknown or deleted endpoints", async () => {
    const a = await newWorkspace(h);
    const b = await newWorkspace(h);
    const endpoint = await registerEndpoint(h, a.token, a.workspaceId, { url: PUBLIC_URL });
    const asB = (req: ReturnType<typeof h.http.get>) => req.set(bearer(b.token));

    const strangerCalls = [
      asB(h.http.get(`/api/workspaces/${a.workspaceId}/webhooks`)),
      asB(h.http.post(`/api/workspaces/${a.workspaceId}/webhooks`)).send({ url: PUBLIC_URL }),
      asB(h.http.get(`/api/workspaces/${a.workspaceId}/webhooks/${endpoint.id}`)),
      asB(h.http.delete(`/api/workspaces/${a.workspaceId}/webhooks/${endpoint.id}`)),
      asB(h.http.get(`/api/workspaces/${a.workspaceId}/webhooks/${endpoint.id}/deliveries`)),
      // A's endpoint through B's own workspace.
      asB(h.http.get(`/api/workspaces/${b.workspaceId}/webhooks/${endpoint.id}`)),
      asB(h.http.delete(`/api/workspaces/${b.workspaceId}/webhooks/${endpoint.id}`)),
      asB(h.http.get(`/api/workspaces/${b.workspaceId}/webhooks/${endpoint.id}/deliveries`)),
    ];
    for (const [i, res] of (await Promise.all(strangerCalls)).entries()) {
      expect(res.status, `call ${i}: ${JSON.stringify(res.body)}`).toBe(404);
      expect(res.body).toEqual({ detail: expect.stringMatching(/was not found\.$/), code: "not_found" });
    }
    expect(await h.deps.db.webhookEndpoint.count({ where: { workspaceId: a.workspaceId } })).toBe(1);

    const del = await h.http.delete(`/api/workspaces/${a.workspaceId}/webhooks/${endpoint.id}`).set(bearer(a.token));
    expect(del.status).toBe(204);
    // Deleting again answers the same; a stranger still learns nothing.
    const again = await h.http.delete(`/api/workspaces/${a.workspaceId}/webhooks/${endpoint.id}`).set(bearer(a.token));
    expect(again.status).toBe(204);
    const strangerAfter = await h.http.delete(`/api/workspaces/${b.workspaceId}/webhooks/${endpoint.id}`).set(bearer(b.token));
    expect(strangerAfter.status).toBe(404);
    const row = await h.deps.db.webhookEndpoint.findUniqueOrThrow({ where: { id: endpoint.id } });
    expect(row.deletedAt).not.toBeNull();
    expect(row.secretSealed).toBe("");
    for (const res of [
      await h.http.get(`/api/workspaces/${a.workspaceId}/webhooks/${endpoint.id}`).set(bearer(a.token)),
      await h.http.get(`/api/workspaces/${a.workspaceId}/webhooks/${endpoint.id}/deliveries`).set(bearer(a.token)),
      await h.http.delete(`/api/workspaces/${a.workspaceId}/webhooks/${randomUUID()}`).set(bearer(a.token)),
      await h.http.get(`/api/workspaces/${a.workspaceId}/webhooks/not-an-id`).set(bearer(a.token)),
    ]) {
      expect(res.status).toBe(404);
      expect(res.body.detail).toBe("Webhook endpoint was not found.");
    }
    const list = await h.http.get(`/api/workspaces/${a.workspaceId}/webhooks`).set(bearer(a.token));
    expect(list.body).toEqual({ endpoints: [] });
  });

  it("lists no deliveries for a new endpoint", async () => {
    const { token, workspaceId } = await newWorkspace(h);
    const endpoint = await registerEndpoint(h, token, workspaceId, { url: PUBLIC_URL });
    const res = await h.http.get(`/api/workspaces/${workspaceId}/webhooks/${endpoint.id}/deliveries`).set(bearer(token));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ endpoint_id: endpoint.id, total: 0, limit: 50, offset: 0, next_offset: null, deliveries: [] });
  });
});

describe("the interface description", () => {
  it("lists the webhook routes in /openapi.json with their schemas", async () => {
    const doc = (await h.http.get("/openapi.json")).body;
    const list = doc.paths["/api/workspaces/{workspace_id}/webhooks"];
    const one = doc.paths["/api/workspaces/{workspace_id}/webhooks/{endpoint_id}"];
    const deliveries = doc.paths["/api/workspaces/{workspace_id}/webhooks/{endpoint_id}/deliveries"];
    expect(Object.keys(list ?? {}).sort()).toEqual(["get", "post"]);
    expect(Object.keys(one ?? {}).sort()).toEqual(["delete", "get", "patch"]);
    expect(Object.keys(deliveries ?? {})).toEqual(["get"]);
    expect(JSON.stringify(list.post.requestBody)).toContain("collection_job.completed");
  });
});

describe("without SECRETS_KEY", () => {
  it("answers 503 to a registration, as meeting-note import does", async () => {
    const bare = await createHarness({ SECRETS_KEY: "" });
    try {
      const { token, workspaceId } = await newWorkspace(bare);
      const res = await bare.http.post(`/api/workspaces/${workspaceId}/webhooks`).set(bearer(token)).send({ url: PUBLIC_URL });
      expect(res.status).toBe(503);
      expect(res.body).toEqual({ detail: expect.stringContaining("SECRETS_KEY"), code: "service_unavailable" });
      expect(await bare.deps.db.webhookEndpoint.count()).toBe(0);
    } finally {
      await bare.close();
    }
  });
});
