import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { ValidationFailed } from "../../src/platform/errors.js";
import type { AnyRoute } from "../../src/platform/http/route.js";
import { optional, parseInput, withDefault } from "../../src/platform/validation.js";
import { allRoutes } from "../../src/routes.js";
import { createHarness, type Harness } from "../helpers/harness.js";
import { fillPath, pathParamNames } from "../reliability/support/arbitraries.js";
import { type Listening, listen, rawRequest } from "../reliability/support/http.js";
import { buildWorld, type World } from "../reliability/support/world.js";

/** What a 422 says: the field's own expectation, in words a client can act on. */
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

const issuesOf = (run: () => unknown) => {
  try {
    run();
  } catch (err) {
    if (err instanceof ValidationFailed) return err.issues;
    throw err;
  }
  throw new Error("expected a validation failure");
};

describe("a JSON body that is not an object", () => {
  it("is a 422 at ['body'] saying the body must be a JSON object, on every route that takes a body", async () => {
    const bodyRoutes = routes.filter((r) => r.body !== undefined);
    expect(bodyRoutes.length).toBeGreaterThan(5);
    for (const route of bodyRoutes) {
      const params = Object.fromEntries(pathParamNames(route.path).map((n) => [n, world.ids[n]?.[0] ?? "x"]));
      for (const text of ["null", "1", '"text"', "true", "[]", "[{}]"]) {
        const res = await rawRequest(server.port, {
          method: route.method.toUpperCase(),
          path: fillPath(route.path, params),
          headers: { "content-type": "application/json", "idempotency-key": "messages-0001", ...credentialFor(route) },
          body: text,
        });
        const where = `${route.method.toUpperCase()} ${route.path} ${text}`;
        expect(res.status, `${where}: ${res.text}`).toBe(422);
        expect(JSON.parse(res.text), where).toEqual({
          detail: [{ loc: ["body"], msg: "The request body should be a JSON object", type: "model_type" }],
        });
      }
    }
  });

  it("and no body at all says a JSON object body is required", async () => {
    const res = await rawRequest(server.port, {
      method: "POST",
      path: "/agent/v1/search",
      headers: { Authorization: `Bearer ${world.token}` },
    });
    expect(res.status).toBe(422);
    expect(JSON.parse(res.text)).toEqual({ detail: [{ loc: ["body"], msg: "A JSON object body is required", type: "missing" }] });
  });

  it("and malformed JSON is still json_invalid", async () => {
    const res = await h.http
      .post("/agent/v1/search")
      .set("Authorization", `Bearer ${world.token}`)
      .set("Content-Type", "application/json")
      .send("nul");
    expect(res.status).toBe(422);
    expect(res.body.detail).toEqual([{ loc: ["body"], msg: expect.stringMatching(/JSON/), type: "json_invalid" }]);
  });
});

describe("a value of the wrong type for an integer field", () => {
  const integer = { msg: "Input should be a valid integer", type: "int_type" };

  it("says an integer is expected, however the field is wrapped", () => {
    const schema = z.object({
      plain: optional(z.number().int()),
      bounded: withDefault(z.number().int().min(1).max(200), 20),
      int: optional(z.int()),
      nested: optional(z.object({ list: z.array(z.object({ count: withDefault(z.number().int().min(0), 0) })) })),
      ratio: optional(z.number()),
    });
    for (const [body, loc] of [
      [{ plain: "10" }, ["plain"]],
      [{ bounded: "10" }, ["bounded"]],
      [{ int: "10" }, ["int"]],
      [{ nested: { list: [{ count: "3" }] } }, ["nested", "list", 0, "count"]],
      [{ plain: true }, ["plain"]],
      [{ plain: 1.5 }, ["plain"]],
    ] as const) {
      expect(
        issuesOf(() => parseInput(schema, body, "body")),
        JSON.stringify(body),
      ).toEqual([{ loc: ["body", ...loc], ...integer }]);
    }
    expect(issuesOf(() => parseInput(schema, { ratio: "0.5" }, "body"))).toEqual([
      { loc: ["body", "ratio"], msg: "Input should be a valid number", type: "float_type" },
    ]);
  });

  it("says so over HTTP for the routes' integer fields", async () => {
    const bearer = { Authorization: `Bearer ${world.token}` };
    const cases: [string, Record<string, unknown>, (string | number)[]][] = [
      ["/agent/v1/search", { query: "pricing", limit: "10" }, ["body", "limit"]],
      [
        "/agent/v1/ingest/coverage",
        { entity_id: world.entityId, coverage_state: "sampled", targets: [{ target: "a", items_found: "3" }] },
        ["body", "targets", 0, "items_found"],
      ],
      [
        "/agent/v1/ingest/content",
        { entity_id: world.entityId, sources: [{ platform: "web", content: "x", engagement: { likes: "3" } }] },
        ["body", "sources", 0, "engagement", "likes"],
      ],
    ];
    for (const [path, body, loc] of cases) {
      const res = await h.http.post(path).set(bearer).send(body);
      expect(res.status, path).toBe(422);
      expect(res.body.detail, path).toEqual([{ loc, ...integer }]);
    }
  });
});
