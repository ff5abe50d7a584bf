import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AnyRoute } from "../../src/platform/http/route.js";
import { allRoutes } from "../../src/routes.js";
import { createHarness, type Harness } from "../helpers/harness.js";
import { pathParamNames } from "./support/arbitraries.js";
import { expectDocumented, expectErrorBody, type Listening, listen, type RawResponse, rawRequest } from "./support/http.js";
import { callers, type Shaped, sendShaped, shapeOf, validRequest } from "./support/requests.js";
import { buildWorld, type World, worldSnapshot } from "./support/world.js";

/**
 * Tenant isolation across every route that takes an id, in its path, query or body.
 * Alice and Bob each own a full set of resources. Bob (with his bearer, and with his
 * own `*` key: keys act as their user) sends requests that are valid in every respect
 * except that one id is Alice's. Each must answer 404 `not_found`, exactly as an id
 * that does not exist, and must change nothing of Alice's. The same request with
 * Bob's own ids is sent first, to show the 404 comes from the foreign id.
 */
let h: Harness;
let server: Listening;
let alice: World;
let bob: World;
let routes: AnyRoute[];

beforeAll(async () => {
  h = await createHarness({
    NOTES_SYNC_WAIT_MS: "0",
    SWEEP_WAIT_MS: "0",
    MEETINGNOTES_API_URL: "http://127.0.0.1:9/",
    MEETINGNOTES_TIMEOUT_MS: "200",
  });
  server = await listen(h.app);
  alice = await buildWorld(h);
  bob = await buildWorld(h);
  routes = allRoutes(h.deps);
});
afterAll(async () => {
  await server?.close();
  await h?.close();
});

const send = (route: AnyRoute, req: Shaped, headers: Record<string, string>) => sendShaped(server.port, route, req, headers);

function expectNotFound(route: AnyRoute, res: RawResponse, what: string, sent: string[] = []) {
  const where = `${route.method.toUpperCase()} ${route.path} ${what}: ${res.status} ${res.text.slice(0, 300)}`;
  expectDocumented(route, res, what);
  expect(res.status, where).toBe(404);
  expectErrorBody(res, where);
  expect(JSON.parse(res.text).code, where).toBe("not_found");
  expectNothingOfAlice(res, where, sent);
}

/** The answer names nothing of Alice's beyond the id Bob sent. */
function expectNothingOfAlice(res: RawResponse, where: string, sent: string[] = []) {
  const hers = [...Object.values(alice.ids).flat(), alice.workspaceId, alice.projectId, alice.userId].filter((id) => !sent.includes(id));
  for (const value of hers) expect(res.text, where).not.toContain(value);
}

/**
 * Alice's id must be indistinguishable from an id that does not exist: a 404, or the
 * very answer an unknown id gets (a filter may answer an empty list; a rule such as
 * "an entity cannot move to another workspace" may refuse both alike), with nothing of
 * Alice's in it.
 */
async function expectLikeUnknown(
  route: AnyRoute,
  req: Shaped,
  where: "body" | "query",
  field: string,
  headers: Record<string, string>,
  what: string,
) {
  const idValue = (id: string) => (field === "provided_sources" ? [{ content_id: id }] : id);
  const foreign = field === "provided_sources" ? alice.contentId : (alice.ids[field]?.[0] as string);
  const variant = (id: string): Shaped => {
    if (where === "query") return { ...req, query: { ...req.query, [field]: id } };
    const body: Record<string, unknown> = { ...(req.body ?? {}), [field]: idValue(id) };
    // A fresh idempotency key, so an idempotent route cannot answer from an earlier request.
    if ("request_id" in body) body.request_id = randomUUID();
    if ("idempotency_key" in body) body.idempotency_key = `tenancy-${randomUUID()}`;
    return { ...req, body };
  };
  const res = await send(route, variant(foreign), headers);
  if (res.status === 404) return expectNotFound(route, res, what, [foreign]);
  const unknownId = randomUUID();
  const unknown = await send(route, variant(unknownId), headers);
  const context = `${route.method.toUpperCase()} ${route.path} ${what}: ${res.status} ${res.text.slice(0, 300)}`;
  expectDocumented(route, res, what);
  expect(res.status, `${context} (an unknown id answers ${unknown.status} ${unknown.text.slice(0, 200)})`).toBe(unknown.status);
  if (res.status >= 400) expect(res.text.replaceAll(foreign, "ID"), context).toBe(unknown.text.replaceAll(unknownId, "ID"));
  expectNothingOfAlice(res, context, [foreign]);
}

const aliceSnapshot = () => worldSnapshot(h, alice);

describe("tenant isolation", () => {
  it("answers 404 for another user's ids in the path, on every route that takes one", async () => {
    const before = await aliceSnapshot();
    let checked = 0;
    for (const route of routes) {
      const names = pathParamNames(route.path).filter((n) => alice.ids[n]);
      if (names.length === 0) continue;
      for (const [who, headers] of callers(route, bob.token, bob.keys.all.raw)) {
        // Bob's own ids first: the request is otherwise fine.
        const mine = Object.fromEntries(pathParamNames(route.path).map((n) => [n, bob.ids[n]?.[0] ?? "entities"]));
        const control = await send(route, validRequest(route, bob, mine), headers);
        expectDocumented(route, control, `control as ${who}`);
        expect(control.status, `${route.path} control as ${who}: ${control.text.slice(0, 300)}`).not.toBe(404);
        // Then each of Alice's ids of that name, all parameters hers.
        for (const name of names) {
          for (const id of alice.ids[name] ?? []) {
            const theirs = Object.fromEntries(pathParamNames(route.path).map((n) => [n, alice.ids[n]?.[0] ?? "entities"]));
            theirs[name] = id;
            const res = await send(route, validRequest(route, bob, theirs), headers);
            expectNotFound(route, res, `${name}=${id} as ${who}`, Object.values(theirs));
            checked++;
          }
          // And Alice's id among Bob's own.
          const mixed = { ...mine, [name]: alice.ids[name]?.[0] as string };
          const res = await send(route, validRequest(route, bob, mixed), headers);
          expectNotFound(route, res, `only ${name} foreign, as ${who}`, [mixed[name] as string]);
        }
      }
    }
    expect(checked).toBeGreaterThan(20);
    expect(await aliceSnapshot()).toBe(before);
  }, 60_000);

  it("answers 404 for another user's ids in the body or query, on every route that takes one", async () => {
    const before = await aliceSnapshot();
    let checked = 0;
    for (const route of routes) {
      // `request_id` in a body is the caller's own idempotency key, and `user_id` (a member to add) names a
      // person who has signed in, not a resource of a tenant.
      const fields = (schema: unknown) =>
        Object.keys(shapeOf(schema)).filter((k) => (alice.ids[k] && k !== "request_id" && k !== "user_id") || k === "provided_sources");
      const bodyFields = fields(route.body);
      const queryFields = fields(route.query);
      if (bodyFields.length + queryFields.length === 0) continue;
      const params = Object.fromEntries(pathParamNames(route.path).map((n) => [n, bob.ids[n]?.[0] ?? "entities"]));
      for (const [who, headers] of callers(route, bob.token, bob.keys.all.raw)) {
        const control = validRequest(route, bob, params);
        const controlRes = await send(route, control, headers);
        expectDocumented(route, controlRes, `control as ${who}`);
        expect(controlRes.status, `${route.path} control as ${who}: ${controlRes.text.slice(0, 300)}`).toBeLessThan(400);
        for (const field of bodyFields) {
          await expectLikeUnknown(route, control, "body", field, headers, `body ${field} as ${who}`);
          checked++;
        }
        for (const field of queryFields) {
          await expectLikeUnknown(route, control, "query", field, headers, `query ${field} as ${who}`);
          checked++;
        }
      }
    }
    expect(checked).toBeGreaterThan(10);
    expect(await aliceSnapshot()).toBe(before);
  }, 60_000);

  it("does not list or export another user's records", async () => {
    const bobAuth = { Authorization: `Bearer ${bob.token}` };
    const get = (path: string, headers: Record<string, string> = bobAuth) => rawRequest(server.port, { method: "GET", path, headers });
    const texts = [
      (await get("/api/entities")).text,
      (await get("/api/user/keys")).text,
      (await get(`/api/entities/${bob.entityId}/skill-runs`)).text,
      (await get("/agent/v1/export/completeness")).text,
    ];
    for (const table of ["entities", "content_store", "opinion_units", "entity_insights", "insight_evidence", "pages", "knowledge"]) {
      const res = await get(`/agent/v1/export/table/${table}?limit=5000`, { "X-API-Key": bob.keys.all.raw });
      expect(res.status, `${table}: ${res.text.slice(0, 200)}`).toBe(200);
      texts.push(res.text);
    }
    const alicesIds = Object.values(alice.ids).flat();
    for (const text of texts) for (const id of [...alicesIds, alice.workspaceId, alice.userId]) expect(text).not.toContain(id);
  });
});
