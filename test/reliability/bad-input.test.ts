import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../../src/app.js";
import type { AnyRoute } from "../../src/platform/http/route.js";
import { allRoutes } from "../../src/routes.js";
import { createHarness, type Harness } from "../helpers/harness.js";
import { fillPath, pathParamNames, sampleValid } from "./support/arbitraries.js";
import { expectDocumented, expectErrorBody, type Listening, listen, type RawResponse, rawRequest } from "./support/http.js";
import { buildWorld, knownIds, type World } from "./support/world.js";

/**
 * Hostile request bodies sent to every route that takes one: too large, nested
 * thousands deep, in the wrong media type or charset, with bytes that are not UTF-8,
 * numbers beyond double and integer range, NUL characters, and prototype keys. Each
 * must end in a documented answer (413, 415, 422, or the route's own), never a 500,
 * and must not change anything process-wide.
 */
let h: Harness;
let server: Listening;
let small: Listening;
let world: World;
let routes: AnyRoute[];

beforeAll(async () => {
  h = await createHarness({ NOTES_SYNC_WAIT_MS: "0", SWEEP_WAIT_MS: "0", MEETINGNOTES_API_URL: "http://127.0.0.1:9/" });
  server = await listen(h.app);
  // The same service with a small body limit, to reach 413 cheaply.
  small = await listen(createApp({ ...h.deps, config: { ...h.deps.config, BODY_LIMIT: "16kb" } }));
  world = await buildWorld(h);
  routes = allRoutes(h.deps);
});
afterAll(async () => {
  await small?.close();
  await server?.close();
  await h?.close();
});

const bodyRoutes = () => routes.filter((r) => r.body !== undefined);

function pathFor(route: AnyRoute): string {
  const params: Record<string, string> = {};
  for (const name of pathParamNames(route.path)) params[name] = world.ids[name]?.[0] ?? "entities";
  return fillPath(route.path, params);
}

function credentialFor(route: AnyRoute): Record<string, string> {
  if ("public" in route.auth) return {};
  return route.auth.bearer ? { Authorization: `Bearer ${world.token}` } : { "X-API-Key": world.keys.all.raw };
}

/** A valid body for the route (from its schema), with the caller's real ids in it. */
function validBody(route: AnyRoute, seed = 7): Record<string, unknown> {
  return sampleValid<Record<string, unknown>>(route.body, knownIds(world), seed);
}

async function send(
  route: AnyRoute,
  body: string | Buffer,
  headers: Record<string, string> = {},
  port = server.port,
): Promise<RawResponse> {
  return rawRequest(port, {
    method: route.method.toUpperCase(),
    path: pathFor(route),
    headers: { "content-type": "application/json", ...credentialFor(route), "idempotency-key": "bad-input-0001", ...headers },
    body,
  });
}

describe("request bodies the service must refuse cleanly", () => {
  it("answers 413 payload_too_large for a body over the limit, on every route", async () => {
    const huge = JSON.stringify({ padding: "x".repeat(40_000) });
    for (const route of bodyRoutes()) {
      const res = await send(route, huge, {}, small.port);
      expect(res.status, `${route.method} ${route.path}`).toBe(413);
      expectErrorBody(res, route.path);
      expect(JSON.parse(res.text).code).toBe("payload_too_large");
    }
  });

  it("answers 415 for other media types and charsets, on every route", async () => {
    const cases: [string, string][] = [
      ["text/plain", "name=x"],
      ["application/x-www-form-urlencoded", "name=x&scopes=*"],
      ["multipart/form-data; boundary=x", "--x\r\nContent-Disposition: form-data; name=a\r\n\r\n1\r\n--x--"],
      ["application/xml", "<a>1</a>"],
      ["application/json; charset=latin1", "{}"],
      ["application/json; charset=iso-8859-1", "{}"],
    ];
    for (const route of bodyRoutes()) {
      for (const [type, body] of cases) {
        const res = await send(route, body, { "content-type": type });
        expect(res.status, `${route.method} ${route.path} as ${type}`).toBe(415);
        expectErrorBody(res, `${route.path} ${type}`);
        expect(JSON.parse(res.text).code).toBe("unsupported_media_type");
      }
      const bare = await rawRequest(server.port, {
        method: route.method.toUpperCase(),
        path: pathFor(route),
        headers: credentialFor(route),
        body: "{}",
      });
      expect(bare.status, `${route.path} without a content type`).toBe(415);
    }
  });

  it("answers 415 or 400 for an unsupported or corrupt content encoding, never a 500", async () => {
    for (const route of bodyRoutes()) {
      for (const encoding of ["br-unknown", "gzip", "deflate"]) {
        const res = await send(route, Buffer.from([0x1f, 0x8b, 0x08, 0x00, 0xde, 0xad]), { "content-encoding": encoding });
        expect([400, 415, 422], `${route.path} ${encoding}: ${res.status} ${res.text}`).toContain(res.status);
        expectErrorBody(res, route.path);
      }
    }
  });

  it("answers malformed and truncated JSON with the 422 shape", async () => {
    for (const route of bodyRoutes()) {
      for (const text of ['{"a":', "{'a': 1}", "[1,2,]", "NaN", '{"a":1}{"b":2}', "\u0000", '"\\ud800"']) {
        const res = await send(route, text);
        expect(res.status, `${route.path} ${JSON.stringify(text)}: ${res.text}`).toBe(422);
        expectErrorBody(res, route.path);
      }
    }
  });

  it("survives JSON nested 50 000 levels deep, in the body and inside a free-form field", async () => {
    const depth = 50_000;
    const deepArray = `${"[".repeat(depth)}${"]".repeat(depth)}`;
    const deepObject = `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`;
    for (const route of bodyRoutes()) {
      for (const deep of [deepArray, deepObject]) {
        const res = await send(route, deep);
        expectDocumented(route, res, "deep body");
        expect(res.status, route.path).not.toBe(500);
      }
      // The same depth under every field of an otherwise valid body.
      const base = validBody(route);
      for (const field of Object.keys(base)) {
        const text = JSON.stringify({ ...base, [field]: "__DEEP__" }).replace('"__DEEP__"', deepObject);
        const res = await send(route, text);
        expectDocumented(route, res, `deep ${field}`);
        expect(res.status, `${route.path} deep ${field}`).not.toBe(500);
      }
    }
    // Still serving.
    expect((await rawRequest(server.port, { method: "GET", path: "/agent/v1/health" })).status).toBe(200);
  }, 60_000);

  it("refuses free-form values nested past the depth limit with a 422 at that spot, and stores shallower ones", async () => {
    const route = routes.find((r) => r.path === "/agent/v1/ingest/content" && r.method === "post") as AnyRoute;
    const nest = (levels: number) => {
      let nested: unknown = "leaf";
      for (let i = 0; i < levels; i++) nested = { level: nested };
      return nested;
    };
    const deep = await send(
      route,
      JSON.stringify({
        entity_id: world.entityId,
        sources: [{ platform: "web", content: "Deep metadata row.", metadata: { nested: nest(2000) } }],
      }),
    );
    expectDocumented(route, deep, "deep metadata");
    expect(deep.status).toBe(422);
    const issue = JSON.parse(deep.text).detail[0];
    expect(issue).toMatchObject({ type: "too_deep" });
    expect(issue.loc.slice(0, 5)).toEqual(["body", "sources", 0, "metadata", "nested"]);
    expect(await h.deps.db.content.count({ where: { entityId: world.entityId, content: "Deep metadata row." } })).toBe(0);

    const fine = await send(
      route,
      JSON.stringify({
        entity_id: world.entityId,
        sources: [{ platform: "web", content: "Nested metadata row.", metadata: { nested: nest(90) } }],
      }),
    );
    expect(fine.status, fine.text).toBe(200);
  });

  it("decodes bytes that are not UTF-8 without failing, and stores only valid text", async () => {
    const route = routes.find((r) => r.path === "/agent/v1/ingest/content" && r.method === "post") as AnyRoute;
    const prefix = Buffer.from(`{"entity_id":"${world.entityId}","sources":[{"platform":"web","id":"bad-utf8","content":"before `);
    const suffix = Buffer.from(' after"}]}');
    for (const bytes of [
      [0xff, 0xfe],
      [0xc3, 0x28],
      [0xed, 0xa0, 0x80],
      [0xf0, 0x28, 0x8c, 0x28],
      [0xe2, 0x82],
    ]) {
      const res = await send(route, Buffer.concat([prefix, Buffer.from(bytes), suffix]));
      expectDocumented(route, res, `bytes ${bytes}`);
      expect(res.status).toBe(200);
    }
    const rows = await h.deps.db.content.findMany({
      where: { entityId: world.entityId, externalId: "bad-utf8" },
      select: { content: true },
    });
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows) {
      expect(row.content).toMatch(/^before .+ after$/);
      expect(row.content).toContain("\ufffd");
    }
    // Invalid bytes in the JSON structure itself are a decode error.
    for (const route of bodyRoutes()) {
      const res = await send(route, Buffer.from([0x7b, 0xff, 0xfe, 0x7d]));
      expect(res.status, route.path).toBe(422);
    }
  });

  it("refuses numbers beyond double and integer range with 422, on every numeric field", async () => {
    for (const route of bodyRoutes()) {
      const base = validBody(route);
      for (const [field, value] of Object.entries(base)) {
        if (typeof value !== "number") continue;
        for (const huge of ["1e309", "-1e309", "18446744073709551616", "9007199254740993", "1e-400"]) {
          const text = JSON.stringify({ ...base, [field]: "__N__" }).replace('"__N__"', huge);
          const res = await send(route, text);
          expectDocumented(route, res, `${field}=${huge}`);
          if (huge.includes("e309") || huge === "18446744073709551616") {
            expect(res.status, `${route.path} ${field}=${huge}: ${res.text}`).toBe(422);
          }
        }
      }
    }
    // A route with integer fields must have been exercised.
    const keys = routes.find((r) => r.path === "/api/entities/:entity_id/skills/:skill_id/runs");
    if (keys) {
      const res = await send(keys, `{"scope_hash":"${"a".repeat(64)}","max_charge_credits":1e309}`);
      expect(res.status).toBe(422);
      expect(JSON.parse(res.text).detail[0].loc).toEqual(["body", "max_charge_credits"]);
    }
  });

  it("answers a NUL character or an unpaired surrogate in any string field with a 422 naming the field", async () => {
    for (const route of bodyRoutes()) {
      const base = validBody(route);
      for (const [field, value] of Object.entries(base)) {
        if (typeof value !== "string") continue;
        for (const bad of [`${value}\u0000`, `${value}\ud800`]) {
          const res = await send(route, JSON.stringify({ ...base, [field]: bad }));
          expectDocumented(route, res, `${field} with ${JSON.stringify(bad.slice(-1))}`);
          if (res.status === 422) {
            const locs = (JSON.parse(res.text).detail as { loc: unknown[] }[]).map((d) => d.loc.join("."));
            expect(
              locs.some((l) => l.startsWith(`body.${field}`)),
              `${route.path}: ${res.text}`,
            ).toBe(true);
          } else {
            // A longer string may fail a bound first (then 422 above) or an id lookup (404); never stored.
            expect([404, 409], `${route.path} ${field}: ${res.status} ${res.text}`).toContain(res.status);
          }
        }
      }
    }
    // In a query string and a path segment too.
    const recall = await rawRequest(server.port, {
      method: "GET",
      path: "/agent/v1/context/recall?query=a%00b",
      headers: { Authorization: `Bearer ${world.token}` },
    });
    expect(recall.status).toBe(422);
    expect(JSON.parse(recall.text).detail[0]).toMatchObject({ loc: ["query", "query"], type: "string_nul" });
    const entity = await rawRequest(server.port, {
      method: "GET",
      path: "/api/entities/a%00b",
      headers: { Authorization: `Bearer ${world.token}` },
    });
    expect([404, 422]).toContain(entity.status);
  });

  it("ignores __proto__ and constructor keys without polluting any prototype", async () => {
    const polluted = () =>
      // biome-ignore lint/suspicious/noExplicitAny: probing for pollution
      (({}) as any).polluted !== undefined || (Object.prototype as any).polluted !== undefined || ([] as any).polluted !== undefined;
    for (const route of bodyRoutes()) {
      const base = validBody(route);
      const text = JSON.stringify(base).replace(
        /^\{/,
        '{"__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}},"prototype":{"polluted":true},',
      );
      const res = await send(route, text);
      expectDocumented(route, res, "prototype keys");
      expect(polluted(), route.path).toBe(false);
      const nested = JSON.stringify({ ...base, metadata: { __proto__: { polluted: true } } }).replace(
        '"metadata":{}',
        '"metadata":{"__proto__":{"polluted":true}}',
      );
      expectDocumented(route, await send(route, nested), "nested prototype keys");
      expect(polluted(), route.path).toBe(false);
    }
    const query = await rawRequest(server.port, {
      method: "GET",
      path: "/api/entities?__proto__[polluted]=1&constructor[prototype][polluted]=1",
      headers: { Authorization: `Bearer ${world.token}` },
    });
    expect(query.status).not.toBe(500);
    expect(polluted()).toBe(false);
  });
});
