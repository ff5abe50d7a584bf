import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runAdminCommand } from "../../src/governance/admin/commands.js";
import type { AnyRoute, RouteRole } from "../../src/platform/http/route.js";
import { atLeast, ROLES, type Role } from "../../src/platform/roles.js";
import { allRoutes } from "../../src/routes.js";
import { createHarness, type Harness } from "../helpers/harness.js";
import { pathParamNames } from "./support/arbitraries.js";
import { expectDocumented, expectErrorBody, type Listening, listen, type RawResponse } from "./support/http.js";
import { callers, type Shaped, sendShaped, shapeOf, validRequest } from "./support/requests.js";
import { buildWorld, type World, worldSnapshot } from "./support/world.js";

/**
 * The role matrix, generated from the route table: every route declares the least workspace role it
 * needs (`role`, src/platform/http/route.ts). Alice owns a full world; a viewer, an editor and an admin
 * join her workspace, and an outsider does not. Each member sends, with their bearer and with their own
 * `*` key, a request that is valid in every other respect: a role below the route's gets 403
 * `forbidden` and changes nothing, the least role that suffices is served, every member reads, and the
 * outsider gets 404 for the world's ids.
 */
let h: Harness;
let server: Listening;
let alice: World;
/** Alice's world with the member routes aimed at a spare member and a signed-in candidate. */
let world: World;
let routes: AnyRoute[];
const members = {} as Record<Exclude<Role, "owner">, Person>;
let outsider: Person;

interface Person {
  token: string;
  userId: string;
  key: string;
}

const WORKSPACE_ROLES: readonly string[] = ROLES;
const DECLARED: readonly RouteRole[] = [...ROLES, "account", "public"];

async function person(): Promise<Person> {
  const sub = `member-${randomUUID()}`;
  const token = await h.token(sub);
  const key = await h.http
    .post("/api/user/keys")
    .set("Authorization", `Bearer ${token}`)
    .send({ name: "all", scopes: ["*"] });
  expect(key.status).toBe(201);
  // Raw export is an account flag an operator sets; members read exports with it like the owner.
  await runAdminCommand(h.deps, ["enable-raw-export", sub]);
  const user = await h.deps.db.user.findUniqueOrThrow({ where: { sub } });
  return { token, userId: user.id, key: key.body.raw_key };
}

/** Adds a member to Alice's workspace, and to her spare one (the target of the whole-workspace routes). */
async function join(who: Person, role: Role): Promise<string> {
  const [res] = await Promise.all(
    [alice.workspaceId, alice.spareWorkspaceId].map((workspaceId) =>
      h.http
        .post(`/api/workspaces/${workspaceId}/members`)
        .set("Authorization", `Bearer ${alice.token}`)
        .send({ user_id: who.userId, role }),
    ),
  );
  expect(res?.status, JSON.stringify(res?.body)).toBe(201);
  return res?.body.id;
}

beforeAll(async () => {
  h = await createHarness({
    NOTES_SYNC_WAIT_MS: "0",
    SWEEP_WAIT_MS: "0",
    MEETINGNOTES_API_URL: "http://127.0.0.1:9/",
    MEETINGNOTES_TIMEOUT_MS: "200",
  });
  server = await listen(h.app);
  alice = await buildWorld(h);
  for (const role of ["viewer", "editor", "admin"] as const) {
    members[role] = await person();
    await join(members[role], role);
  }
  outsider = await person();
  // Member routes act on a spare member (not on the caller, who may always leave) and add a signed-in candidate.
  const spare = await join(await person(), "viewer");
  const candidate = await person();
  world = { ...alice, ids: { ...alice.ids, member_id: [spare], user_id: [candidate.userId] } };
  routes = allRoutes(h.deps);
}, 60_000);
afterAll(async () => {
  await server?.close();
  await h?.close();
});

const isWrite = (route: AnyRoute) => route.method !== "get";
const workspaceRole = (route: AnyRoute) => (WORKSPACE_ROLES.includes(route.role) ? (route.role as Role) : null);
const label = (route: AnyRoute) => `${route.method.toUpperCase()} ${route.path}`;

/** Reads first, then writes, deletes last: a write that is served may end what a later route reads. */
const ordered = () => {
  const rank = (r: AnyRoute) => (r.method === "get" ? 0 : r.method === "delete" ? 2 : 1);
  return routes.filter((r) => workspaceRole(r) !== null).sort((a, b) => rank(a) - rank(b));
};

/** The route's request in Alice's world, with fresh idempotency keys so nothing answers from a replay. */
function requestFor(route: AnyRoute): Shaped {
  const params = Object.fromEntries(pathParamNames(route.path).map((n) => [n, world.ids[n]?.[0] ?? "entities"]));
  const req = validRequest(route, world, params);
  if (req.body) {
    if ("request_id" in req.body) req.body.request_id = randomUUID();
    if ("idempotency_key" in req.body) req.body.idempotency_key = `roles-${randomUUID()}`;
    if (route.path.endsWith("/members")) req.body = { user_id: world.ids.user_id?.[0], role: "viewer" };
    if (route.path.endsWith("/members/:member_id")) req.body = { role: "editor" };
    // An execution's report is an editor's; its review (review_status, training_scopes) an admin's.
    if (route.path === "/api/sweeps/executions/:execution_id") req.body = { status: "running" };
  }
  return req;
}

/** The route's request sent by `who` with each credential it takes (only the first, when `once`), one after another. */
async function send(route: AnyRoute, who: Person, once = false): Promise<(readonly [string, RawResponse])[]> {
  const answers: (readonly [string, RawResponse])[] = [];
  for (const [how, headers] of callers(route, who.token, who.key).slice(0, once ? 1 : undefined)) {
    answers.push([how, await sendShaped(server.port, route, requestFor(route), headers)]);
  }
  return answers;
}

/** Whether the request names one of the world's ids, in its path, query or body. */
const namesWorld = (route: AnyRoute) =>
  pathParamNames(route.path).some((n) => world.ids[n]) ||
  [route.query, route.body].some((schema) => Object.keys(shapeOf(schema)).some((k) => world.ids[k] && k !== "user_id"));

/** Why the answer is not one a caller with the right role gets, if it is not. */
function notServed(route: AnyRoute, res: RawResponse, who: string): string | null {
  expectDocumented(route, res, who);
  const refused = res.status === 403 || res.status === 404 || res.status >= 500;
  return refused ? `${label(route)} as ${who}: ${res.status} ${res.text.slice(0, 300)}` : null;
}

describe("the role matrix", () => {
  it("declares a rule on every route in the table", () => {
    expect(routes.length).toBeGreaterThan(60);
    for (const route of routes) expect(DECLARED, label(route)).toContain(route.role);
    // Every write names a role above viewer (viewers only read) or acts on the caller's own account.
    for (const route of routes.filter((r) => isWrite(r) && r.readOnly !== true)) expect(route.role, label(route)).not.toBe("viewer");
  });

  it("refuses every member below a route's role with 403 forbidden, and changes nothing", async () => {
    const before = await worldSnapshot(h, alice);
    let refused = 0;
    const problems: string[] = [];
    for (const route of ordered()) {
      const needed = workspaceRole(route) as Role;
      for (const role of (["viewer", "editor", "admin"] as const).filter((r) => !atLeast(r, needed))) {
        for (const [how, res] of await send(route, members[role])) {
          const where = `${label(route)} as ${role} (${how}): ${res.status} ${res.text.slice(0, 300)}`;
          expectDocumented(route, res, `${role} ${how}`);
          if (res.status !== 403) problems.push(where);
          else {
            expectErrorBody(res, where);
            expect(JSON.parse(res.text).code, where).toBe("forbidden");
          }
          refused++;
        }
      }
    }
    expect(problems).toEqual([]);
    expect(refused).toBeGreaterThan(40);
    expect(await worldSnapshot(h, alice)).toBe(before);
  }, 120_000);

  it("answers 404 to a non-member for the workspace's ids, on every workspace route", async () => {
    const before = await worldSnapshot(h, alice);
    let checked = 0;
    const problems: string[] = [];
    const theWorlds = [alice.workspaceId, alice.projectId, ...alice.entityIds, alice.contentId, alice.analysisId, alice.runId];
    for (const route of ordered().filter(namesWorld)) {
      for (const [how, res] of await send(route, outsider)) {
        const where = `${label(route)} as outsider (${how}): ${res.status} ${res.text.slice(0, 300)}`;
        // A 404, or (a list filtered by the workspace) an answer with nothing of the workspace's in it.
        if (res.status === 404) expect(JSON.parse(res.text).code, where).toBe("not_found");
        else if (res.status >= 400 || theWorlds.some((id) => res.text.includes(id))) problems.push(where);
        checked++;
      }
    }
    expect(problems).toEqual([]);
    expect(checked).toBeGreaterThan(60);
    expect(await worldSnapshot(h, alice)).toBe(before);
  }, 120_000);

  it("serves every read to every member, and every write to the least role it declares", async () => {
    let served = 0;
    const problems: string[] = [];
    for (const route of ordered()) {
      const needed = workspaceRole(route) as Role;
      const roles = isWrite(route) ? [needed] : ROLES.filter((r) => atLeast(r, needed));
      for (const role of roles) {
        const who = role === "owner" ? { token: alice.token, userId: alice.userId, key: alice.keys.all.raw } : members[role];
        // A write is sent once: the same write again may be a replay or a conflict.
        for (const [how, res] of await send(route, who, isWrite(route))) {
          const problem = notServed(route, res, `${role} (${how})`);
          if (problem) problems.push(problem);
          served++;
        }
      }
    }
    expect(problems).toEqual([]);
    expect(served).toBeGreaterThan(100);
  }, 120_000);
});
