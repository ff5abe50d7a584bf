import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { allRoutes } from "../../src/routes.js";
import { createHarness, type Harness } from "../helpers/harness.js";

let h: Harness;
let token: string;
beforeAll(async () => {
  h = await createHarness({ BODY_LIMIT: "2kb" });
  token = await h.token();
});
afterAll(() => h.close());

describe("HTTP edge", () => {
  it("answers unknown routes with a JSON 404", async () => {
    const res = await h.http.get("/agent/v1/nope");
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ detail: "No route matches GET /agent/v1/nope.", code: "route_not_found" });
  });

  it("answers malformed JSON with the 422 shape", async () => {
    const res = await h.http
      .post("/api/user/keys")
      .set("Authorization", `Bearer ${token}`)
      .set("Content-Type", "application/json")
      .send('{"name": "x",');
    expect(res.status).toBe(422);
    expect(res.body.detail).toHaveLength(1);
    expect(res.body.detail[0]).toMatchObject({ loc: ["body"], type: "json_invalid" });
    expect(res.body.detail[0].msg).toMatch(/JSON/);
  });

  it("answers a body over the configured limit with 413", async () => {
    const res = await h.http
      .post("/api/user/keys")
      .set("Authorization", `Bearer ${token}`)
      .send({ name: "x".repeat(4000) });
    expect(res.status).toBe(413);
    expect(res.body).toEqual({ detail: expect.any(String), code: "payload_too_large" });
  });

  it("answers a non-JSON body with 415", async () => {
    const res = await h.http
      .post("/api/user/keys")
      .set("Authorization", `Bearer ${token}`)
      .set("Content-Type", "text/plain")
      .send("name=x");
    expect(res.status).toBe(415);
    expect(res.body.code).toBe("unsupported_media_type");
  });

  it("answers a JSON body that is not an object with the 422 shape", async () => {
    const res = await h.http
      .post("/api/user/keys")
      .set("Authorization", `Bearer ${token}`)
      .set("Content-Type", "application/json")
      .send("[1,2]");
    expect(res.status).toBe(422);
    expect(res.body.detail[0]).toMatchObject({ loc: ["body"], type: "model_type" });
  });

  it("ignores unknown fields and treats null optionals as absent", async () => {
    const res = await h.http
      .post("/api/user/keys")
      .set("Authorization", `Bearer ${token}`)
      .send({ name: "extra", scopes: null, colour: "blue" });
    expect(res.status).toBe(201);
    expect(res.body.key.scopes).toEqual(["ingest"]);
  });

  it("echoes a well-formed request id and generates one otherwise", async () => {
    const echoed = await h.http.get("/agent/v1/health").set("X-Request-Id", "req-123");
    expect(echoed.headers["x-request-id"]).toBe("req-123");
    const generated = await h.http.get("/agent/v1/health").set("X-Request-Id", "bad id with spaces");
    expect(generated.headers["x-request-id"]).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("sends security headers and no x-powered-by", async () => {
    const res = await h.http.get("/agent/v1/health");
    expect(res.headers["x-powered-by"]).toBeUndefined();
    expect(res.headers["x-content-type-options"]).toBe("nosniff");
    // Not configured for HTTPS (no https:// PUBLIC_BASE_URL): no HSTS (test/platform/https-headers.test.ts).
    expect(res.headers["strict-transport-security"]).toBeUndefined();
  });
});

describe("interface description and operator pages", () => {
  it("serves an OpenAPI 3.1 document listing every route", async () => {
    const res = await h.http.get("/openapi.json");
    expect(res.status).toBe(200);
    expect(res.body.openapi).toBe("3.1.0");
    expect(res.body.info.version).toBe("1.0.0");
    const routes = allRoutes(h.deps);
    for (const route of routes) {
      const path = route.path.replace(/:([A-Za-z_]+)/g, "{$1}");
      expect(res.body.paths[path]?.[route.method], `${route.method} ${path}`).toBeDefined();
    }
    const create = res.body.paths["/api/user/keys"].post;
    expect(create.requestBody.content["application/json"].schema.properties.scopes).toBeDefined();
    expect(create.security).toEqual([{ userBearer: [] }]);
    const usage = res.body.paths["/api/user/keys/{key_id}/usage"].get;
    expect(usage.parameters.map((p: { name: string; in: string }) => `${p.in}:${p.name}`)).toEqual([
      "path:key_id",
      "query:limit",
      "query:offset",
    ]);
  });

  it("serves the interactive viewer at /docs", async () => {
    const res = await h.http.get("/docs/");
    expect(res.status).toBe(200);
    expect(res.text).toContain("swagger-ui");
  });

  it("puts bull-board and metrics behind operator credentials", async () => {
    const denied = await h.http.get("/admin/queues");
    expect(denied.status).toBe(401);
    expect(denied.headers["www-authenticate"]).toMatch(/^Basic/);
    const wrong = await h.http.get("/admin/queues").auth("operator", "wrong-password");
    expect(wrong.status).toBe(401);
    const board = await h.http.get("/admin/queues").auth("operator", "operator-password");
    expect(board.status).toBe(200);
    expect(board.text).toMatch(/<html/i);
    const api = await h.http.get("/admin/queues/api/queues").auth("operator", "operator-password");
    expect(api.status).toBe(200);
    expect(api.body.queues.map((q: { name: string }) => q.name).sort()).toEqual([
      "analysis",
      "collection",
      "enrichment",
      "notes-sync",
      "routines",
      "webhooks",
      "workflow-run",
    ]);
    const metrics = await h.http.get("/metrics").auth("operator", "operator-password");
    expect(metrics.status).toBe(200);
    expect(metrics.text).toContain("http_request_duration_seconds");
    expect(metrics.text).toMatch(/queue_jobs\{queue="collection",state="waiting"\} 0/);
  });
});
