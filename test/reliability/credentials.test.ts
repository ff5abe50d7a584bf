import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runAdminCommand } from "../../src/governance/admin/commands.js";
import type { ApiKeyScope, AuthRule } from "../../src/platform/auth.js";
import type { AnyRoute } from "../../src/platform/http/route.js";
import { allRoutes } from "../../src/routes.js";
import { createHarness, type Harness, signToken, TEST_JWT_SECRET } from "../helpers/harness.js";
import { fillPath, pathParamNames } from "./support/arbitraries.js";
import { expectDocumented, expectErrorBody, type Listening, listen, type RawResponse, rawRequest } from "./support/http.js";
import { buildWorld, type World } from "./support/world.js";

/**
 * Every route's credential rule, checked from the outside: the expected answer for each
 * kind of credential is computed from the route's declared `auth` rule, so a route added
 * later is covered by the same table. Requests carry random ids and an empty body, so a
 * credential that is accepted shows as the 404/422 that follows authentication, and
 * nothing is changed.
 */
const ISSUER = "https://id.example.test/";
const AUDIENCE = "research-evidence";

let h: Harness;
let server: Listening;
let world: World;
/** A second user whose account has no raw-export enablement. */
let plain: World;
let routes: AnyRoute[];

beforeAll(async () => {
  h = await createHarness({ AUTH_ISSUER: ISSUER, AUTH_AUDIENCE: AUDIENCE });
  server = await listen(h.app);
  world = await buildWorld(h, { tokenOptions: { issuer: ISSUER, audience: AUDIENCE } });
  plain = await buildWorld(h, { tokenOptions: { issuer: ISSUER, audience: AUDIENCE } });
  await runAdminCommand(h.deps, ["disable-raw-export", plain.sub]);
  routes = allRoutes(h.deps);
});
afterAll(async () => {
  await server?.close();
  await h?.close();
});

type Expectation = { status: 401 | 403; code: string } | "accepted";

/** What a rule answers for a key holding `scopes` of a user with or without raw export. */
function forKey(rule: AuthRule, scopes: ApiKeyScope[], rawExport: boolean): Expectation {
  if ("public" in rule) return "accepted";
  if (rule.keys.length === 0) return { status: 401, code: "bearer_required" };
  if (!rule.keys.some((s) => scopes.includes(s))) return { status: 403, code: "insufficient_scope" };
  if (rule.rawExport && !rawExport) return { status: 403, code: "raw_export_disabled" };
  return "accepted";
}

function forBearer(rule: AuthRule, rawExport: boolean): Expectation {
  if ("public" in rule) return "accepted";
  if (!rule.bearer) return { status: 403, code: "insufficient_scope" };
  if (rule.rawExport && !rawExport) return { status: 403, code: "raw_export_disabled" };
  return "accepted";
}

const refused = (rule: AuthRule, code: string): Expectation => ("public" in rule ? "accepted" : { status: 401, code });

function request(route: AnyRoute, headers: Record<string, string>): Promise<RawResponse> {
  const params: Record<string, string> = {};
  for (const name of pathParamNames(route.path)) params[name] = name === "table_name" ? "entities" : "00000000-0000-4000-8000-000000000000";
  const withBody = route.method !== "get";
  return rawRequest(server.port, {
    method: route.method.toUpperCase(),
    path: fillPath(route.path, params),
    headers: { ...headers, ...(withBody ? { "content-type": "application/json" } : {}) },
    ...(withBody ? { body: "{}" } : {}),
  });
}

function check(route: AnyRoute, res: RawResponse, expected: Expectation, what: string) {
  const where = `${route.method.toUpperCase()} ${route.path} with ${what}: ${res.status} ${res.text.slice(0, 200)}`;
  expectDocumented(route, res, what);
  if (expected === "accepted") {
    expect([401, 403], where).not.toContain(res.status);
    return;
  }
  expect(res.status, where).toBe(expected.status);
  expectErrorBody(res, where);
  expect(JSON.parse(res.text).code, where).toBe(expected.code);
}

async function tokens() {
  const sub = world.sub;
  const good = { issuer: ISSUER, audience: AUDIENCE };
  const unsigned = (payload: object) =>
    `${Buffer.from(JSON.stringify({ alg: "none", typ: "JWT" })).toString("base64url")}.${Buffer.from(JSON.stringify(payload)).toString("base64url")}.`;
  return {
    expired: await signToken(sub, { ...good, expiresIn: Math.floor(Date.now() / 1000) - 60 }),
    "wrong signature": await signToken(sub, { ...good, secret: `${TEST_JWT_SECRET}-not-ours` }),
    "wrong audience": await signToken(sub, { ...good, audience: "some-other-api" }),
    "no audience": await signToken(sub, { issuer: ISSUER }),
    "wrong issuer": await signToken(sub, { ...good, issuer: "https://evil.example.test/" }),
    "alg none": unsigned({ sub, iss: ISSUER, aud: AUDIENCE, exp: Math.floor(Date.now() / 1000) + 600 }),
    "truncated signature": (await signToken(sub, good)).slice(0, -6),
    "not a JWT": "not-a-jwt",
  };
}

describe("credential rules, for every route", () => {
  it("refuses a missing credential with 401 and a Bearer challenge (public routes answer)", async () => {
    for (const route of routes) check(route, await request(route, {}), refused(route.auth, "unauthorized"), "no credential");
  });

  it("refuses malformed Authorization headers with 401 invalid_token (public routes ignore them)", async () => {
    const malformed = ["Bearer", "Bearer ", "Basic dXNlcjpwYXNzd29yZA==", "Bearer a b", "Token abc", "bearer\tx y"];
    for (const route of routes) {
      for (const value of malformed) {
        check(route, await request(route, { Authorization: value }), refused(route.auth, "invalid_token"), `Authorization: ${value}`);
      }
    }
  });

  it("refuses expired, wrongly signed, wrong-audience, wrong-issuer, unsigned and garbled bearers with 401 invalid_token", async () => {
    const bad = await tokens();
    for (const route of routes) {
      for (const [what, token] of Object.entries(bad)) {
        check(route, await request(route, { Authorization: `Bearer ${token}` }), refused(route.auth, "invalid_token"), what);
      }
    }
  });

  it("accepts a valid bearer exactly where the rule allows bearers, and applies raw-export enablement", async () => {
    for (const route of routes) {
      check(route, await request(route, { Authorization: `Bearer ${world.token}` }), forBearer(route.auth, true), "bearer");
      check(
        route,
        await request(route, { Authorization: `Bearer ${plain.token}` }),
        forBearer(route.auth, false),
        "bearer without raw export",
      );
    }
  });

  it("refuses unknown and revoked keys with 401, in either header", async () => {
    const unknown = `svc_live_${randomBytes(30)
      .toString("base64url")
      .replace(/[^A-Za-z0-9]/g, "a")
      .slice(0, 40)}`;
    for (const route of routes) {
      for (const header of ["X-API-Key", "Authorization"] as const) {
        const wrap = (raw: string) => (header === "Authorization" ? `Bearer ${raw}` : raw);
        check(route, await request(route, { [header]: wrap(unknown) }), refused(route.auth, "invalid_token"), `unknown key in ${header}`);
        check(
          route,
          await request(route, { [header]: wrap(world.keys.revoked.raw) }),
          refused(route.auth, "key_revoked"),
          `revoked key in ${header}`,
        );
      }
    }
  });

  it("applies each key scope as the rule says: bearer-only routes refuse keys, missing scopes are 403", async () => {
    const keys: [string, ApiKeyScope[], World][] = [
      ["ingest", ["ingest"], world],
      ["export", ["export"], world],
      ["all", ["*"], world],
      ["export", ["export"], plain],
      ["all", ["*"], plain],
    ];
    for (const route of routes) {
      for (const [name, scopes, owner] of keys) {
        const raw = owner.keys[name as "ingest" | "export" | "all"].raw;
        const expected = forKey(route.auth, scopes, owner === world);
        const what = `${scopes.join(",")} key of a user ${owner === world ? "with" : "without"} raw export`;
        check(route, await request(route, { "X-API-Key": raw }), expected, what);
        check(route, await request(route, { Authorization: `Bearer ${raw}` }), expected, `${what} as a bearer`);
      }
    }
  });

  it("records refused keyed requests in the key's usage", async () => {
    const route = routes.find((r) => r.path === "/api/user/keys" && r.method === "get") as AnyRoute;
    const before = await h.deps.db.apiKeyUsage.count({ where: { keyId: world.keys.ingest.id } });
    const res = await request(route, { "X-API-Key": world.keys.ingest.raw });
    expect(res.status).toBe(401);
    const after = await h.deps.db.apiKeyUsage.findMany({ where: { keyId: world.keys.ingest.id }, orderBy: { id: "desc" } });
    expect(after.length).toBe(before + 1);
    expect(after[0]).toMatchObject({ route: "/api/user/keys", statusCode: 401 });
  });
});
