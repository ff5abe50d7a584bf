import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AnyRoute } from "../../src/platform/http/route.js";
import { allRoutes } from "../../src/routes.js";
import { createHarness, type Harness } from "../helpers/harness.js";
import { fillPath, pathParamNames } from "./support/arbitraries.js";
import { type Listening, listen, type RawResponse, rawRequest } from "./support/http.js";
import { buildWorld, type World } from "./support/world.js";

/**
 * Security headers on every answer the service gives: each route's success and error
 * answers, the router's own 404, and the edge's 413/415/422 (sent before any route
 * runs). Credentialed answers are never stored by caches; no cross-origin reads are
 * granted; nothing names the server software.
 */
let h: Harness;
let server: Listening;
let world: World;
let routes: AnyRoute[];

beforeAll(async () => {
  // Configured as served over HTTPS, so HSTS is among the headers checked (test/platform/https-headers.test.ts covers plain HTTP).
  h = await createHarness({ BODY_LIMIT: "8kb", PUBLIC_BASE_URL: "https://evidence.example.com" });
  server = await listen(h.app);
  world = await buildWorld(h);
  routes = allRoutes(h.deps);
});
afterAll(async () => {
  await server?.close();
  await h?.close();
});

function expectSecurityHeaders(res: RawResponse, where: string) {
  const hd = res.headers;
  expect(hd["x-content-type-options"], where).toBe("nosniff");
  expect(hd["strict-transport-security"], where).toMatch(/max-age=\d{7,}/);
  expect(hd["x-frame-options"], where).toMatch(/^(DENY|SAMEORIGIN)$/);
  expect(hd["content-security-policy"], where).toMatch(/default-src 'self'/);
  expect(hd["content-security-policy"], where).toMatch(/frame-ancestors 'self'|frame-ancestors 'none'/);
  expect(hd["referrer-policy"], where).toBe("no-referrer");
  expect(hd["cross-origin-opener-policy"], where).toBe("same-origin");
  expect(hd["cross-origin-resource-policy"], where).toBe("same-origin");
  expect(hd["x-powered-by"], where).toBeUndefined();
  expect(hd.server, where).toBeUndefined();
  expect(hd["access-control-allow-origin"], where).toBeUndefined();
  expect(hd["access-control-allow-credentials"], where).toBeUndefined();
  expect(hd["x-request-id"], where).toMatch(/^[A-Za-z0-9._-]{1,128}$/);
  if (!res.streamed && res.text.length > 0) expect(hd["content-type"], where).toMatch(/^application\/json; charset=utf-8$/);
}

function credentialFor(route: AnyRoute): Record<string, string> {
  if ("public" in route.auth) return {};
  return route.auth.bearer ? { Authorization: `Bearer ${world.token}` } : { "X-API-Key": world.keys.all.raw };
}

describe("security headers", () => {
  it("are on every route's answers, success and error, with an Origin header present", async () => {
    for (const route of routes) {
      const params = Object.fromEntries(pathParamNames(route.path).map((n) => [n, world.ids[n]?.[0] ?? "entities"]));
      const base = {
        method: route.method.toUpperCase(),
        path: fillPath(route.path, params),
        headers: { Origin: "https://evil.example.com", "content-type": "application/json", ...credentialFor(route) },
        ...(route.method === "get" ? {} : { body: "{}" }),
      };
      const ok = await rawRequest(server.port, base);
      expectSecurityHeaders(ok, `${route.method} ${route.path} -> ${ok.status}`);
      const denied = await rawRequest(server.port, { ...base, headers: { Origin: "https://evil.example.com" } });
      expectSecurityHeaders(denied, `${route.method} ${route.path} without credential -> ${denied.status}`);
      const preflight = await rawRequest(server.port, {
        method: "OPTIONS",
        path: base.path,
        headers: { Origin: "https://evil.example.com", "Access-Control-Request-Method": base.method },
      });
      expect(preflight.headers["access-control-allow-origin"], `preflight ${route.path}`).toBeUndefined();
      expect(preflight.headers["access-control-allow-methods"], `preflight ${route.path}`).toBeUndefined();
    }
  });

  it("are on the edge's own answers: unknown route, too large, wrong media type, malformed JSON", async () => {
    const auth = { Authorization: `Bearer ${world.token}` };
    const answers = [
      await rawRequest(server.port, { method: "GET", path: "/nope" }),
      await rawRequest(server.port, {
        method: "POST",
        path: "/api/user/keys",
        headers: { ...auth, "content-type": "application/json" },
        body: JSON.stringify({ name: "x".repeat(20_000) }),
      }),
      await rawRequest(server.port, {
        method: "POST",
        path: "/api/user/keys",
        headers: { ...auth, "content-type": "text/plain" },
        body: "x",
      }),
      await rawRequest(server.port, {
        method: "POST",
        path: "/api/user/keys",
        headers: { ...auth, "content-type": "application/json" },
        body: "{",
      }),
    ];
    expect(answers.map((a) => a.status)).toEqual([404, 413, 415, 422]);
    for (const res of answers) expectSecurityHeaders(res, `edge ${res.status}`);
  });

  it("mark every credentialed answer as not storable by any cache", async () => {
    for (const route of routes) {
      if ("public" in route.auth) continue;
      const params = Object.fromEntries(pathParamNames(route.path).map((n) => [n, world.ids[n]?.[0] ?? "entities"]));
      const res = await rawRequest(server.port, {
        method: route.method.toUpperCase(),
        path: fillPath(route.path, params),
        headers: { "content-type": "application/json", ...credentialFor(route) },
        ...(route.method === "get" ? {} : { body: "{}" }),
      });
      const where = `${route.method} ${route.path} -> ${res.status}`;
      if (res.streamed) expect(res.headers["cache-control"], where).toMatch(/no-cache|no-store/);
      else expect(res.headers["cache-control"], where).toMatch(/no-store/);
    }
    const created = await rawRequest(server.port, {
      method: "POST",
      path: "/api/user/keys",
      headers: { Authorization: `Bearer ${world.token}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "cache probe" }),
    });
    expect(created.status).toBe(201);
    expect(JSON.parse(created.text).raw_key).toMatch(/^svc_live_/);
    expect(created.headers["cache-control"]).toMatch(/no-store/);
  });
});
