import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LIVE_SCRIPT_PATH, STYLESHEET_PATH } from "../../src/delivery/share/pages/index.js";
import type { AnyRoute } from "../../src/platform/http/route.js";
import { allRoutes } from "../../src/routes.js";
import { createHarness, type Harness } from "../helpers/harness.js";
import { bodyFor, fillPath, type Known, paramsFor, pathParamNames, queryFor } from "./support/arbitraries.js";
import { expectDocumented, expectErrorBody, type Listening, listen, PLATFORM_STATUSES, rawRequest } from "./support/http.js";
import { buildWorld, knownIds, type World } from "./support/world.js";

/**
 * Property-based bad input against every route in `allRoutes`: generated path
 * parameters, query strings, bodies and headers, derived from each route's own zod
 * schemas (mostly valid, one field broken, or anything at all), sent by a caller that
 * holds a valid credential for the route and owns real resources (so generated
 * requests reach the services, not only the validator). Every answer must be a status
 * the route documents or a platform error status, in the documented body shape, never
 * a 500 and never a stack trace.
 */
const RUNS_PER_ROUTE = Number(process.env.FUZZ_RUNS ?? 20);

let h: Harness;
let server: Listening;
let world: World;
let known: Known;
const stats: Record<string, Record<number, number>> = {};

beforeAll(async () => {
  h = await createHarness({
    NOTES_SYNC_WAIT_MS: "0",
    SWEEP_WAIT_MS: "0",
    MEETINGNOTES_API_URL: "http://127.0.0.1:9/",
    MEETINGNOTES_TIMEOUT_MS: "200",
    // The share pages' budget per address is tested in test/share/rate-limit.test.ts; here every request reaches its page.
    SHARE_PAGES_PER_MINUTE: "0",
  });
  server = await listen(h.app);
  world = await buildWorld(h);
  known = knownIds(world);
});
afterAll(async () => {
  await server?.close();
  await h?.close();
});

const printable = fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength: 60 });

/** Extra headers: the documented ones with hostile values, and a request id. */
function headersFor(route: AnyRoute) {
  const documented: Record<string, fc.Arbitrary<string | undefined>> = {};
  for (const header of route.headers ?? []) {
    documented[header.name] = fc.option(fc.oneof(printable, fc.constantFrom("idem-key-0001", "12345678", "a:b:c:d:e", "9".repeat(200))), {
      nil: undefined,
    });
  }
  return fc.record({
    ...documented,
    "X-Request-Id": fc.option(printable, { nil: undefined }),
    "Content-Type": fc.constantFrom("application/json", "application/json", "application/json; charset=utf-8", "application/vnd.api+json"),
    Accept: fc.constantFrom("*/*", "application/json", "text/event-stream", "text/html"),
  });
}

/** Query strings sent verbatim: bad escapes, bracket syntax, prototype keys. */
const RAW_QUERIES = [
  "%ff=1",
  "limit=%E0%A4%A",
  "limit=%00",
  "x[y]=1",
  "__proto__=1",
  "constructor[prototype][x]=1",
  "a=1&a=2&a=3",
  "=",
  "&&&",
];

/** A share page, its event stream or one of its themes (a token of any form, an optional trailing slash). */
const PAGE_PATH = /^\/share\/[^/]+(\/events|\/insights\/[^/]+)?\/?$/;

function credentialFor(route: AnyRoute): Record<string, string> {
  if ("public" in route.auth) return {};
  if (route.auth.bearer) return { Authorization: `Bearer ${world.token}` };
  return { "X-API-Key": world.keys.all.raw };
}

describe("every route under generated input", () => {
  it("answers only documented statuses and shapes, never a 500 or a stack trace", async () => {
    const routes = allRoutes(h.deps);
    expect(routes.length).toBeGreaterThan(10);
    for (const route of routes) {
      const names = pathParamNames(route.path);
      await fc.assert(
        fc.asyncProperty(
          paramsFor(route.params, names, known),
          queryFor(route.query, known),
          bodyFor(route.body, known),
          headersFor(route),
          fc.option(fc.constantFrom(...RAW_QUERIES), { nil: undefined, freq: 3 }),
          async (params, query, body, headers, rawQuery) => {
            const search = new URLSearchParams();
            for (const [k, v] of Object.entries(query)) for (const one of Array.isArray(v) ? v : [v]) search.append(k, one);
            const qs = [search.toString(), rawQuery].filter(Boolean).join("&");
            const path = fillPath(route.path, params) + (qs ? `?${qs}` : "");
            const sent = Object.fromEntries(Object.entries(headers).filter(([, v]) => v !== undefined)) as Record<string, string>;
            const res = await rawRequest(server.port, {
              method: route.method.toUpperCase(),
              path,
              headers: { ...sent, ...credentialFor(route) },
              ...(body === undefined ? {} : { body: JSON.stringify(body) }),
            });
            const key = `${route.method.toUpperCase()} ${route.path}`;
            const seen = stats[key] ?? {};
            stats[key] = seen;
            seen[res.status] = (seen[res.status] ?? 0) + 1;
            expectDocumented(route, res, `${path} body=${JSON.stringify(body)?.slice(0, 300)}`);
            // Never a 500, whatever the route documents.
            expect(res.status).not.toBe(500);
          },
        ),
        { numRuns: RUNS_PER_ROUTE, seed: Number(process.env.FUZZ_SEED ?? Date.now() % 2 ** 31), endOnFailure: true },
      );
    }
    if (process.env.FUZZ_STATS) console.log(JSON.stringify(stats, null, 1));
  }, 180_000);

  it("answers the share pages and their assets only as documented, under generated tokens, methods, headers and queries", async () => {
    // Live tokens of the world's entity and analysis, the raw material of altered and truncated ones.
    const tokens: string[] = [];
    for (const [resource, id] of [
      ["entity", world.entityId],
      ["analysis", world.analysisId],
    ] as const) {
      const res = await fetch(`${server.url}/api/share-links`, {
        method: "POST",
        headers: { Authorization: `Bearer ${world.token}`, "Content-Type": "application/json" },
        body: JSON.stringify({ resource, id }),
      });
      expect(res.status).toBe(201);
      tokens.push(new URL(((await res.json()) as { url: string }).url).pathname.split("/").at(-1) as string);
    }
    const base64url = fc.string({
      unit: fc.constantFrom(..."ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"),
      minLength: 43,
      maxLength: 43,
    });
    const token = fc.oneof(
      fc.constantFrom(...tokens),
      fc
        .tuple(fc.constantFrom(...tokens), fc.nat({ max: 42 }), fc.constantFrom("A", "_", "-", ""))
        .map(([t, at, c]) => t.slice(0, at) + c + t.slice(at + 1)),
      base64url,
      printable.map(encodeURIComponent),
      fc.constantFrom("", "%", "%zz", "%00", "..", "%2e%2e", "a%2Fb", "x".repeat(5000), "%E0%A4%A"),
    );
    const path = fc.oneof(
      {
        weight: 6,
        arbitrary: fc
          .tuple(
            token,
            fc.constantFrom(
              "",
              "/events",
              "/",
              "/events/x",
              "/x/events",
              "/insights/1",
              "/insights/2/",
              "/insights/0",
              "/insights/x",
              "/insights",
            ),
          )
          .map(([t, rest]) => `/share/${t}${rest}`),
      },
      { weight: 1, arbitrary: fc.constantFrom(STYLESHEET_PATH, LIVE_SCRIPT_PATH, "/favicon.ico", "/share", "/share/") },
    );
    const method = fc.constantFrom("GET", "GET", "GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS");
    const headers = fc.record({
      "Last-Event-ID": fc.option(fc.oneof(printable, fc.constantFrom("0", "3", "-1", "9".repeat(40), "1e3")), { nil: undefined }),
      "If-None-Match": fc.option(fc.oneof(printable, fc.constant("*")), { nil: undefined }),
      Accept: fc.constantFrom("*/*", "text/html", "text/event-stream", "application/json"),
      "Content-Type": fc.constantFrom("application/json", "text/plain", "application/x-www-form-urlencoded"),
      "X-Forwarded-For": fc.option(fc.constantFrom("203.0.113.9", "not-an-address", "::1"), { nil: undefined }),
    });
    const query = fc.option(
      fc.oneof(
        fc.constantFrom(
          ...RAW_QUERIES,
          "v=1",
          "v=",
          "v[]=1",
          "last_event_id=abc",
          "sort=newest",
          "sort[]=newest",
          "cursor=WyJyIiwzXQ",
          "cursor=",
        ),
        printable.map(encodeURIComponent),
      ),
      {
        nil: undefined,
      },
    );
    const body = fc.option(fc.oneof(printable, fc.json()), { nil: undefined });

    const revokedBefore = await h.deps.db.shareLink.count({ where: { revokedAt: { not: null } } });
    await fc.assert(
      fc.asyncProperty(path, method, headers, query, body, async (p, m, hs, q, b) => {
        const sent = Object.fromEntries(Object.entries(hs).filter(([, v]) => v !== undefined)) as Record<string, string>;
        const withBody = b !== undefined && m !== "GET" && m !== "HEAD";
        const url = p + (q ? `?${q}` : "");
        const res = await rawRequest(server.port, { method: m, path: url, headers: sent, ...(withBody ? { body: b } : {}) });
        const where = `${m} ${url.slice(0, 200)} ${JSON.stringify(sent)} -> ${res.status} ${res.text.slice(0, 300)}`;
        const key = `${m} ${p.startsWith("/share/") ? "/share/{token}" : p}`;
        const seen = stats[key] ?? {};
        stats[key] = seen;
        seen[res.status] = (seen[res.status] ?? 0) + 1;
        expect(res.status, where).not.toBe(500);
        // A page, its stream or an asset answers what the pages document; any other path the API's own answers to an unknown route.
        const page = PAGE_PATH.test(p) || p === STYLESHEET_PATH || p === LIVE_SCRIPT_PATH || p === "/favicon.ico";
        expect(page ? [200, 204, 304, 400, 404, 405, 429] : [...PLATFORM_STATUSES, 405], where).toContain(res.status);
        expect(/\n\s+at\s.+:\d+:\d+|node_modules|\/work\/|\.ts:\d+|PrismaClient/.test(res.text), `internals in ${where}`).toBe(false);
        const type = String(res.headers["content-type"] ?? "");
        if (type.startsWith("text/html")) {
          // Every page, the not-found and too-many-requests ones too, with the pages' own rules.
          expect(res.headers["content-security-policy"], where).toMatch(/default-src 'none'/);
          expect(res.headers["cache-control"], where).toBe("no-store");
          expect(res.headers["referrer-policy"], where).toBe("no-referrer");
        }
        if (res.status === 405) expect(res.headers.allow, where).toBe("GET, HEAD");
        if (type.startsWith("application/json") && res.status >= 400 && m !== "HEAD") expectErrorBody(res, where);
        // Only a read reaches a page, its stream or an asset: anything else is refused before it is looked at.
        // (A path that is not validly percent-encoded names no token: 400 before any route.)
        if (!["GET", "HEAD"].includes(m) && page) {
          if (res.status === 400) expect(res.text, where).toMatch(/not validly percent-encoded/);
          else expect(res.status, where).toBe(405);
        }
      }),
      { numRuns: RUNS_PER_ROUTE * 15, seed: Number(process.env.FUZZ_SEED ?? Date.now() % 2 ** 31), endOnFailure: true },
    );
    // Nothing a generated request did changed a link.
    expect(await h.deps.db.shareLink.count({ where: { revokedAt: { not: null } } })).toBe(revokedBefore);
    if (process.env.FUZZ_STATS) console.log(JSON.stringify(stats, null, 1));
  }, 180_000);
});
