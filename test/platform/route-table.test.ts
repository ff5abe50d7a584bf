import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AnyRoute } from "../../src/platform/http/route.js";
import { allRoutes } from "../../src/routes.js";
import { createHarness, type Harness } from "../helpers/harness.js";
import { fillPath, pathParamNames, RAW, sampleValid } from "../reliability/support/arbitraries.js";
import { expectErrorBody, type Listening, listen, type RawResponse, rawRequest } from "../reliability/support/http.js";
import { buildWorld, knownIds, type World } from "../reliability/support/world.js";

/**
 * Rules that hold for every route in the table: an id in the path that is malformed
 * answers as an unknown id does (404 `not_found`), and a method a path does
 * not serve answers 405 with `Allow`, both in the documented error shape.
 */
let h: Harness;
let server: Listening;
let world: World;
let routes: AnyRoute[];

beforeAll(async () => {
  h = await createHarness({ NOTES_SYNC_WAIT_MS: "0", SWEEP_WAIT_MS: "0", MEETINGNOTES_API_URL: "http://127.0.0.1:9/" });
  server = await listen(h.app);
  world = await buildWorld(h);
  routes = allRoutes(h.deps);
});
afterAll(async () => {
  await server?.close();
  await h?.close();
});

function credentialFor(route: AnyRoute): Record<string, string> {
  if ("public" in route.auth) return {};
  return route.auth.bearer ? { Authorization: `Bearer ${world.token}` } : { "X-API-Key": world.keys.all.raw };
}

/** Sampling a valid body is the slow part of a call: each route's is made once. */
const bodies = new Map<AnyRoute, string>();
function sampledBody(route: AnyRoute): string {
  let body = bodies.get(route);
  if (body === undefined) {
    body = JSON.stringify(sampleValid(route.body as NonNullable<AnyRoute["body"]>, knownIds(world), 11));
    bodies.set(route, body);
  }
  return body;
}

/** The route with real ids in every parameter but `name`, which takes `value`. */
async function call(route: AnyRoute, name: string, value: string): Promise<RawResponse> {
  const params: Record<string, string> = {};
  for (const param of pathParamNames(route.path)) params[param] = param === name ? value : (world.ids[param]?.[0] ?? "x");
  const body = route.body ? sampledBody(route) : undefined;
  return rawRequest(server.port, {
    method: route.method.toUpperCase(),
    path: fillPath(route.path, params),
    headers: { "content-type": "application/json", "idempotency-key": `route-table-${randomUUID()}`, ...credentialFor(route) },
    ...(body === undefined ? {} : { body }),
  });
}

const MALFORMED = [
  "not-a-uuid",
  "1",
  "0",
  `${randomUUID()}x`,
  randomUUID().replaceAll("-", ""),
  "x".repeat(300),
  `${RAW}%00`,
  `${RAW}%F0%9F%98%80`,
  `${RAW}a%20b`,
  "'; select 1; --",
];

describe("id path parameters", () => {
  it("answer a malformed id as an unknown id: 404 not_found, on every route", async () => {
    const idRoutes = routes.filter((r) => pathParamNames(r.path).some((n) => n.endsWith("_id")));
    expect(idRoutes.length).toBeGreaterThan(10);
    for (const route of idRoutes) {
      for (const name of pathParamNames(route.path).filter((n) => n.endsWith("_id"))) {
        const unknownId = name === "request_id" ? `unknown-${randomUUID()}` : randomUUID();
        const unknown = await call(route, name, unknownId);
        const where = `${route.method.toUpperCase()} ${route.path} (${name})`;
        expect(unknown.status, `${where} unknown: ${unknown.text}`).toBe(404);
        expectErrorBody(unknown, where);
        expect(JSON.parse(unknown.text).code, where).toBe("not_found");
        for (const value of MALFORMED) {
          const res = await call(route, name, value);
          expect({ status: res.status, body: JSON.parse(res.text) }, `${where} ${JSON.stringify(value)}`).toEqual({
            status: 404,
            body: { detail: expect.stringMatching(/ was not found\.$/), code: "not_found" },
          });
        }
      }
    }
  }, 120_000);

  it("keep a 422 for path parameters that are not ids", async () => {
    const res = await rawRequest(server.port, {
      method: "GET",
      path: "/agent/v1/export/table/not_a_table",
      headers: { "X-API-Key": world.keys.all.raw },
    });
    expect(res.status).toBe(422);
    expect(JSON.parse(res.text).detail[0].loc).toEqual(["path", "table_name"]);
  });
});

describe("methods a path does not serve", () => {
  const ALL = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"];

  it("answer 405 method_not_allowed with Allow listing the path's methods, on every path", async () => {
    const byPath = new Map<string, Set<string>>();
    for (const route of routes) {
      const methods = byPath.get(route.path) ?? new Set<string>();
      methods.add(route.method.toUpperCase());
      if (route.method === "get") methods.add("HEAD");
      byPath.set(route.path, methods);
    }
    for (const [path, served] of byPath) {
      const params = Object.fromEntries(pathParamNames(path).map((n) => [n, world.ids[n]?.[0] ?? "entities"]));
      const filled = fillPath(path, params);
      // Another route template may serve the same concrete path (e.g. /api/entities/onboarding).
      const alsoServed = routes.filter((r) => r.path !== path && matches(r.path, filled)).map((r) => r.method.toUpperCase());
      for (const method of ALL.filter((m) => !served.has(m) && !alsoServed.includes(m) && !(m === "HEAD" && alsoServed.includes("GET")))) {
        const res = await rawRequest(server.port, {
          method,
          path: filled,
          headers: { "content-type": "application/json", Authorization: `Bearer ${world.token}` },
          ...(method === "GET" || method === "HEAD" ? {} : { body: "{}" }),
        });
        const where = `${method} ${filled}`;
        expect(res.status, `${where}: ${res.text}`).toBe(405);
        const allow = String(res.headers.allow ?? "")
          .split(", ")
          .filter(Boolean);
        expect(new Set(allow), where).toEqual(new Set([...served, ...alsoServed, ...(alsoServed.includes("GET") ? ["HEAD"] : [])]));
        if (method === "HEAD") continue;
        expectErrorBody(res, where);
        expect(JSON.parse(res.text).code, where).toBe("method_not_allowed");
      }
    }
  });

  it("still answer 404 route_not_found for a path no route serves", async () => {
    const res = await rawRequest(server.port, { method: "PUT", path: "/agent/v1/nothing-here", headers: {} });
    expect(res.status).toBe(404);
    expect(JSON.parse(res.text)).toEqual({ detail: "No route matches PUT /agent/v1/nothing-here.", code: "route_not_found" });
  });

  it("answer PUT on the entity list with 405 and Allow: GET, HEAD, POST", async () => {
    const res = await h.http.put("/api/entities").set("Authorization", `Bearer ${world.token}`).send({ name: "x" });
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe("GET, HEAD, POST");
    expect(res.body).toEqual({ detail: expect.stringContaining("PUT"), code: "method_not_allowed" });
    const options = await h.http.options("/api/entities");
    expect(options.status).toBe(200);
    expect(options.headers.allow).toBe("GET, HEAD, POST");
  });
});

/** Whether an Express path template matches a concrete path (one segment per parameter). */
function matches(template: string, path: string): boolean {
  const pattern = template.replace(/:[A-Za-z_]+/g, "[^/]+");
  return new RegExp(`^${pattern}$`).test(path);
}
