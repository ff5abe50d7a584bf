import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AnyRoute } from "../../src/platform/http/route.js";
import { allRoutes } from "../../src/routes.js";
import { createHarness, type Harness } from "../helpers/harness.js";
import { bodyFor, fillPath, type Known, paramsFor, pathParamNames, queryFor } from "./support/arbitraries.js";
import { expectDocumented, type Listening, listen, rawRequest } from "./support/http.js";
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
});
