import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TOOLS } from "../../src/delivery/mcp/server.js";
import { runAdminCommand } from "../../src/governance/admin/commands.js";
import type { AnyRoute, RouteRole } from "../../src/platform/http/route.js";
import { atLeast, ROLES, type Role } from "../../src/platform/roles.js";
import { allRoutes } from "../../src/routes.js";
import { createHarness, type Harness } from "../helpers/harness.js";
import { connect } from "../mcp/support.js";
import { pathParamNames } from "./support/arbitraries.js";
import { expectDocumented, expectErrorBody, type Listening, listen, type RawResponse } from "./support/http.js";
import { callers, type Shaped, sendShaped, shapeOf, validRequest } from "./support/requests.js";
import { buildWorld, WORLD_QUOTE, type World, worldSnapshot } from "./support/world.js";

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

/**
 * The scope a request names without naming it: the request with every id of the world left out of its
 * query and body (`none`), or with only content ids left (`content`: `provided_sources`, `content_ids`).
 * A route that resolves such a request to the world's workspace must check the role there too.
 */
type Indirect = "none" | "content";

/** Request fields that name what a request reads or writes (its scope). */
const SCOPE_FIELDS = ["entity_id", "project_id", "workspace_id", "parent_entity_id", "content_id", "provided_sources", "content_ids"];
const CONTENT_FIELDS = ["content_id", "provided_sources", "content_ids"];

/** Writes a member below their role must not be served whatever they name; `null` when the route names its scope in the path. */
function indirectRequest(route: AnyRoute, how: Indirect): Shaped | null {
  if (pathParamNames(route.path).length > 0) return null;
  const req = requestFor(route);
  const fields = [route.query, route.body].flatMap((schema) => Object.keys(shapeOf(schema)));
  if (!fields.some((f) => SCOPE_FIELDS.includes(f))) return null;
  // Content ids stay in the `content` variant, at the top and in items (a knowledge record's evidence).
  const strip = how === "none" ? SCOPE_FIELDS : SCOPE_FIELDS.filter((f) => !CONTENT_FIELDS.includes(f));
  const without = (value: Record<string, unknown>) => {
    for (const key of strip) delete value[key];
  };
  for (const value of [req.query, req.body] as (Record<string, unknown> | undefined)[]) {
    if (!value) continue;
    without(value);
    // Items that name a scope of their own (observations, evidence) name none either.
    for (const items of Object.values(value).filter(Array.isArray)) {
      for (const item of items) if (item && typeof item === "object") without(item as Record<string, unknown>);
    }
  }
  if (how === "content") {
    if (req.body && "provided_sources" in shapeOf(route.body)) req.body.provided_sources = [{ content_id: world.contentId }];
    if (req.body && "content_ids" in shapeOf(route.body)) req.body.content_ids = [world.contentId];
    if (!JSON.stringify([req.query, req.body]).includes(world.contentId)) return null;
  }
  return req;
}

/**
 * Routes that serve a write naming no workspace in the caller's own: a new entity goes to the caller's
 * personal workspace, an onboarding makes a new workspace. Neither reads nor writes the world's.
 */
const OWN_WORKSPACE_WRITES = new Set(["POST /api/entities", "POST /api/entities/onboarding"]);

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

  it("refuses a member below a route's role also when the request names no scope or only content ids, and changes nothing", async () => {
    const before = await worldSnapshot(h, alice);
    const analysesBefore = await h.deps.db.analysis.count();
    let refused = 0;
    const problems: string[] = [];
    for (const route of ordered().filter(isWrite)) {
      const needed = workspaceRole(route) as Role;
      if (needed === "viewer" || OWN_WORKSPACE_WRITES.has(label(route))) continue;
      for (const how of ["none", "content"] as const) {
        const req = indirectRequest(route, how);
        if (!req) continue;
        for (const role of (["viewer", "editor", "admin"] as const).filter((r) => !atLeast(r, needed))) {
          for (const [credential, headers] of callers(route, members[role].token, members[role].key)) {
            const res = await sendShaped(server.port, route, req, headers);
            const where = `${label(route)} naming ${how === "none" ? "no scope" : "only content ids"} as ${role} (${credential}): ${res.status} ${res.text.slice(0, 300)}`;
            expectDocumented(route, res, `${role} ${credential} ${how}`);
            // Never served; refused for the role (403), or for what it names (400 scope_required, 422).
            if (![400, 403, 422].includes(res.status)) problems.push(where);
            refused++;
          }
        }
      }
    }
    expect(problems).toEqual([]);
    expect(refused).toBeGreaterThan(10);
    expect(await worldSnapshot(h, alice)).toBe(before);
    expect(await h.deps.db.analysis.count()).toBe(analysesBefore);
  }, 120_000);

  it("refuses a viewer every MCP mode that writes, naming the world's ids, no scope or only content ids, and changes nothing", async () => {
    const before = await worldSnapshot(h, alice);
    const analysesBefore = await h.deps.db.analysis.count();
    const args = mcpWrites();
    // Every mode that stands for a route above viewer is here, so a new one cannot go unchecked.
    const byRoute = new Map(routes.map((r) => [label(r), r]));
    const writing = TOOLS.flatMap((tool) =>
      Object.entries(tool.modes)
        .filter(([, mode]) =>
          mode.routes.some((r) => (byRoute.get(r)?.role ?? "account") !== "viewer" && WORKSPACE_ROLES.includes(byRoute.get(r)?.role ?? "")),
        )
        .map(([name]) => `${tool.name}:${name}`),
    );
    expect(Object.keys(args).sort()).toEqual(writing.sort());

    const problems: string[] = [];
    const connected = await connect(server.url, { bearer: members.viewer.token });
    try {
      for (const [mode, named] of Object.entries(args)) {
        const [tool] = mode.split(":") as [string];
        const variants: [string, Record<string, unknown>][] = [
          ["the world's ids", named],
          ["no scope", withoutIds(named)],
          ["only content ids", { ...withoutIds(named), ...("content_ids" in named ? { content_ids: [world.contentId] } : {}) }],
        ];
        for (const [how, sent] of variants) {
          // Each call a request of its own: a request id used before would answer a replay (or a 409).
          const call = "request_id" in sent ? { ...sent, request_id: randomUUID() } : sent;
          // A refusal is immediate; a call still running after a while was accepted (an analysis waiting for its result).
          const answer = await connected.client
            .callTool({ name: tool, arguments: call }, undefined, { timeout: 10_000 })
            .catch((err: Error) => ({ isError: false, structuredContent: { accepted: err.message } }));
          const body = answer.structuredContent as { status?: number; code?: string };
          const where = `${mode} naming ${how} as viewer: ${JSON.stringify(answer.structuredContent).slice(0, 300)}`;
          if (answer.isError !== true) problems.push(where);
          else if (
            how === "the world's ids" ? body.status !== 403 || body.code !== "forbidden" : ![400, 403, 422].includes(body.status ?? 0)
          )
            problems.push(where);
        }
      }
    } finally {
      await connected.close();
    }
    expect(problems).toEqual([]);
    expect(await worldSnapshot(h, alice)).toBe(before);
    expect(await h.deps.db.analysis.count()).toBe(analysesBefore);
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

/** The ids of the world an MCP call may name, by argument name. */
const MCP_IDS = ["entity_id", "project_id", "workspace_id", "content_ids", "insight_id", "skill_id", "action_id", "execution_id", "job_id"];

function withoutIds(args: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(args).filter(([key]) => !MCP_IDS.includes(key)));
}

/** Each MCP mode that writes in a workspace, with arguments valid in Alice's world (its ids included). */
function mcpWrites(): Record<string, Record<string, unknown>> {
  const entity_id = world.entityId;
  const request_id = randomUUID();
  return {
    "analyze:run": { question: "What do users say about pricing?", entity_id, content_ids: [world.contentId], request_id },
    "analyze:start": { action: "start", question: "Why do teams churn?", entity_id, request_id },
    // With an approved maximum, so the call starts a run (a quote alone is a read every member may make).
    "analyze:skill": {
      action: "skill",
      entity_id,
      skill_id: world.skillId,
      request_id,
      scope_hash: "a".repeat(64),
      max_charge_credits: 10,
    },
    "ingest:sources": {
      destination: "sources",
      entity_id,
      sources: [{ id: `roles-${request_id}`, platform: "reddit", url: "https://example.com/roles", content: "A viewer's source." }],
    },
    "ingest:coverage": { destination: "coverage", entity_id, coverage: { collector: "hackernews", coverage_state: "bounded" } },
    "ingest:evidence": { destination: "evidence", entity_id, title: "A viewer's record", content: "A viewer's evidence." },
    "ingest:insight": {
      destination: "insight",
      entity_id,
      request_id,
      expected_revision: 0,
      title: "Pricing",
      summary: "Buyers find the pricing page confusing.",
      evidence: [{ content_id: world.contentId, quote: WORLD_QUOTE }],
      content_ids: [world.contentId],
    },
    "ingest:skills": { destination: "skills", entity_id, skills: [], expected_skills: [] },
    "ingest:routine": {
      destination: "routine",
      entity_id,
      skill_id: world.skillId,
      routine: { enabled: false, interval_hours: 24, source_mode: "saved", max_charge_cents: 100, expected_revision: 1 },
    },
    "ingest:observations": { destination: "observations", entity_id, observations: [{ content: "A viewer's observation" }] },
    "ingest:execution": {
      destination: "execution",
      action_id: world.ids.object_id?.[0],
      executor_platform: "agent",
      approved_for_execution: true,
      steps: ["Rewrite the pricing page"],
    },
  };
}
