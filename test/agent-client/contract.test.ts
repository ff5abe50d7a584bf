import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RoutineScheduler, startRoutineScheduler } from "../../src/workflows/routines/scheduler.js";
import { processors } from "../../workers/processors.js";
import { CORPUS } from "../analysis/corpus.js";
import { createTenant, storeSources, type Tenant, waitFor } from "../analysis/fixtures.js";
import { createHarness, type Harness } from "../helpers/harness.js";
import { onboardCompany } from "../runs/helpers.js";

/**
 * The contract with the reference agent client (`@crowdlisten/harness`, pinned in package.json,
 * unchanged): every mode its tool handler reaches over HTTP works against this service. The modes
 * with suites of their own are named in COVERED_ELSEWHERE (each of those files drives the same
 * handler); this file drives the rest, and the inventory test fails when the client gains a mode
 * that no suite drives. The client reads its base URL once, when its module loads.
 */
type HandleV2Tool = (sb: unknown, userId: string, name: string, args: Record<string, unknown>, accessToken: string) => Promise<string>;
interface ToolDefinition {
  name: string;
  inputSchema: { properties: Record<string, { enum?: string[] }> };
}

/** Modes the client serves from its own database client, not over HTTP. */
const NOT_OVER_HTTP = ["recall:workspaces", "recall:projects", "recall:insights", "recall:content"];
/** Modes driven through the client's handler by another suite. */
const COVERED_ELSEWHERE: Record<string, string> = {
  "recall:collection_plan": "test/agent-client/evidence-calls.test.ts",
  "recall:actions": "test/agent-client/evidence-calls.test.ts",
  "recall:intelligence": "test/agent-client/evidence-calls.test.ts",
  "ingest:evidence": "test/agent-client/evidence-calls.test.ts",
  "ingest:observations": "test/agent-client/evidence-calls.test.ts",
  "recall:knowledge": "test/knowledge/harness-client.test.ts",
  "recall:knowledge_source": "test/knowledge/harness-client.test.ts",
  "recall:knowledge_changes": "test/knowledge/harness-client.test.ts",
  "recall:knowledge_context": "test/knowledge/harness-client.test.ts",
  "ingest:insight": "test/knowledge/harness-client.test.ts",
  "ingest:execution": "test/actions/executions.test.ts",
};
/** Modes this file drives. */
const DRIVEN_HERE = [
  "recall:search",
  "recall:discover",
  "recall:connection",
  "recall:entities",
  "recall:skills",
  "recall:routines",
  "recall:skill_runs",
  "analyze:run",
  "analyze:start",
  "analyze:status",
  "analyze:skill",
  "ingest:context",
  "ingest:sources",
  "ingest:coverage",
  "ingest:skills",
  "ingest:routine",
];

let h: Harness;
let server: Server;
let handleV2Tool: HandleV2Tool;
let tools: ToolDefinition[];
let tenant: Tenant;
let contentIds: string[];
let scheduler: RoutineScheduler;

const callAs = (token: string) => async (name: string, args: Record<string, unknown>) =>
  JSON.parse(await handleV2Tool(null, "user", name, args, token));

/** The client throws an Error whose message is its JSON error report ({error, status, …}). */
async function refusal(promise: Promise<unknown>) {
  const error = await promise.then(
    () => {
      throw new Error("the call succeeded");
    },
    (err: Error) => err,
  );
  return JSON.parse(error.message) as { status: number; details: string };
}

beforeAll(async () => {
  // A compressed hour (ROUTINE_HOUR_MS): a daily routine comes due 24 × 50 ms after it is enabled.
  h = await createHarness({ ROUTINE_HOUR_MS: "50", ROUTINE_TICK_MS: "100", SSE_HEARTBEAT_MS: "200" });
  server = h.app.listen(0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  process.env.CROWDLISTEN_AGENT_URL = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const client = (await import("@crowdlisten/harness/dist/harness-v2.js")) as unknown as {
    handleV2Tool: HandleV2Tool;
    V2_TOOLS: ToolDefinition[];
  };
  ({ handleV2Tool } = client);
  tools = client.V2_TOOLS;
  // The worker's processors, as the worker process runs them.
  h.startWorkers(processors);
  scheduler = startRoutineScheduler(h.deps);
  tenant = await createTenant(h);
  contentIds = await storeSources(h, tenant, CORPUS);
  await waitFor(async () =>
    (await h.deps.db.content.count({ where: { id: { in: contentIds }, enrichment: { enrichedAt: { not: null } } } })) === contentIds.length
      ? true
      : undefined,
  );
});
afterAll(async () => {
  await scheduler?.close();
  await new Promise((resolve) => server.close(resolve));
  await h.close();
});

describe("the reference client's modes", () => {
  it("are each driven by a suite, or served by the client without HTTP", () => {
    const modes = (tool: string, property: string) =>
      (tools.find((t) => t.name === tool)?.inputSchema.properties[property]?.enum ?? []).map((m) => `${tool}:${m}`);
    const declared = [...modes("recall", "mode"), ...modes("analyze", "action"), ...modes("ingest", "destination"), "ingest:observations"];
    expect(declared.length).toBeGreaterThan(25);
    const known = new Set([...NOT_OVER_HTTP, ...Object.keys(COVERED_ELSEWHERE), ...DRIVEN_HERE]);
    expect(declared.filter((m) => !known.has(m))).toEqual([]);
    expect([...known].filter((m) => !declared.includes(m))).toEqual([]);
    for (const [mode, file] of Object.entries(COVERED_ELSEWHERE)) {
      const text = readFileSync(file, "utf8");
      expect(text, `${file} drives the client's handler`).toContain("@crowdlisten/harness/dist/harness-v2.js");
      const word = mode.split(":")[1]!;
      expect(text, `${file} drives ${mode}`).toMatch(new RegExp(`["']${word}["']|${word}:`));
    }
  });
});

describe("recall and ingest of records", () => {
  it("search, context: saves a page and finds it again", async () => {
    const call = callAs(tenant.token);
    const saved = await call("ingest", {
      title: "Pricing interview notes",
      content: "Buyers find the pricing tiers hard to compare.",
      tags: ["pricing"],
    });
    expect(saved).toMatchObject({ ingested: true, path: "notes/pricing-interview-notes" });
    const found = await call("recall", { query: "pricing tiers" });
    expect(found.results).toEqual([expect.objectContaining({ title: "Pricing interview notes" })]);
  });

  it("discover: public evidence search over stored originals", async () => {
    const found = await callAs(tenant.token)("recall", { mode: "discover", query: "pricing", platforms: ["reddit"], limit: 5 });
    expect(found.results.length).toBeGreaterThan(0);
    expect(found.results.every((r: { platform: string }) => r.platform === "reddit")).toBe(true);
    expect(contentIds).toEqual(expect.arrayContaining(found.results.map((r: { content_id: string }) => r.content_id)));
  });

  it("connection, entities: the caller's connection and entities", async () => {
    const call = callAs(tenant.token);
    const connection = await call("recall", { mode: "connection", entity_id: tenant.entityId });
    expect(connection).toMatchObject({ contract_version: 1, status: "connected", entity_id: tenant.entityId, client_interface: "mcp" });
    const entities = await call("recall", { mode: "entities" });
    expect(entities.entities.map((e: { id: string }) => e.id)).toContain(tenant.entityId);
  });

  it("sources, coverage: stores a batch of originals and the collector's coverage", async () => {
    const call = callAs(tenant.token);
    const runId = `harness-run-${randomUUID()}`;
    const stored = await call("ingest", {
      destination: "sources",
      entity_id: tenant.entityId,
      collection_run_id: runId,
      sources: [
        {
          id: "hn-1",
          platform: "hackernews",
          url: "https://news.ycombinator.com/item?id=1",
          content: "Acme's export keeps failing on large files.",
          author: "pg",
        },
      ],
    });
    expect(stored.content_ids).toHaveLength(1);
    const row = await h.deps.db.content.findUniqueOrThrow({ where: { id: stored.content_ids[0] } });
    expect(row.content).toBe("Acme's export keeps failing on large files.");
    const coverage = await call("ingest", {
      destination: "coverage",
      entity_id: tenant.entityId,
      coverage: { collector: "hackernews", coverage_state: "bounded", collection_run_id: runId, notes: "first page only" },
    });
    expect(coverage).toMatchObject({ coverage_state: "bounded" });
  });
});

describe("analyses", () => {
  it("run: streams an analysis to its stored result, every quote verbatim", async () => {
    const result = await callAs(tenant.token)("analyze", {
      question: "What do users think about Acme pricing?",
      entity_id: tenant.entityId,
      search_mode: "multi_source",
      request_id: randomUUID(),
    });
    expect(result.status).toBe("completed");
    const evidence = result.data.evidence as { content_id: string; quote: string; feedback_kind: string | null }[];
    expect(evidence.length).toBeGreaterThan(0);
    // Each quoted original says what kind of feedback it is, as enrichment read it.
    for (const e of evidence)
      expect(["bug_report", "feature_request", "question", "praise", "complaint", "other"]).toContain(e.feedback_kind);
    const rows = await h.deps.db.content.findMany({ where: { id: { in: evidence.map((e) => e.content_id) } } });
    for (const e of evidence) expect(rows.find((r) => r.id === e.content_id)?.content).toContain(e.quote);
  });

  it("start, status: a durable research job, read back by its id", async () => {
    const call = callAs(tenant.token);
    const started = await call("analyze", {
      action: "start",
      question: "Why do teams cancel Acme?",
      entity_id: tenant.entityId,
      request_id: randomUUID(),
    });
    const jobId = started.job_id ?? started.id;
    expect(jobId).toEqual(expect.any(String));
    const status = await call("analyze", { action: "status", job_id: jobId });
    expect(status).toMatchObject({ entity_id: tenant.entityId });
    expect(["queued", "running", "completed", "partial"]).toContain(status.status);
  });
});

describe("saved skills, runs and routines", () => {
  it("keeps the caller's ids through a create, an edit and a retry, and refuses a stale list with the current one", async () => {
    const ctx = await onboardCompany(h, { credits: 1000 });
    const call = callAs(ctx.token);
    const before = await call("recall", { mode: "skills", entity_id: ctx.entityId });
    const launch = {
      id: "launch-review",
      title: "Launch engagement",
      question: "Which launch posts receive replies?",
      decision: "Choose topics for the next launch",
      evidence: "Saved posts and captured measurements.",
    };
    const created = await call("ingest", {
      destination: "skills",
      entity_id: ctx.entityId,
      expected_skills: before.skills,
      skills: [...before.skills, launch],
    });
    expect(created.skills.map((s: { id: string }) => s.id)).toEqual(["obj-1", "obj-2", "launch-review"]);
    expect(created.skills[2]).toMatchObject({
      ...launch,
      revision: 1,
      runs_url: `/api/entities/${ctx.entityId}/skills/launch-review/runs`,
    });

    // The same desired list again (an answer that was lost): nothing changes.
    const retried = await call("ingest", {
      destination: "skills",
      entity_id: ctx.entityId,
      expected_skills: before.skills,
      skills: [...before.skills, launch],
    });
    expect(retried.skills).toEqual(created.skills);

    // Edit as the client documents: read, change a title, send the list back with what was read.
    const read = await call("recall", { mode: "skills", entity_id: ctx.entityId });
    const edited = read.skills.map((s: { id: string; title: string }) =>
      s.id === "launch-review" ? { ...s, title: "Launch replies" } : s,
    );
    const saved = await call("ingest", { destination: "skills", entity_id: ctx.entityId, expected_skills: read.skills, skills: edited });
    const after = saved.skills.find((s: { id: string }) => s.id === "launch-review");
    expect(after).toMatchObject({ id: "launch-review", title: "Launch replies", revision: 2, created_at: created.skills[2].created_at });
    expect(saved.skills.filter((s: { id: string }) => s.id !== "launch-review")).toEqual(
      read.skills.filter((s: { id: string }) => s.id !== "launch-review"),
    );

    // A list read before the edit is stale: 409, and nothing changes. The client reports the detail; the
    // answer itself also holds the current skills to merge with.
    const stale = await refusal(
      call("ingest", { destination: "skills", entity_id: ctx.entityId, expected_skills: read.skills, skills: [launch] }),
    );
    expect(stale).toMatchObject({ status: 409, details: expect.stringMatching(/changed since they were read/) });
    const direct = await h.http
      .put(`/api/entities/${ctx.entityId}/skills`)
      .set("Authorization", `Bearer ${ctx.token}`)
      .send({ expected_skills: read.skills, skills: [launch] });
    expect(direct.status).toBe(409);
    expect(direct.body).toMatchObject({ code: "conflict", current_skills: saved.skills });
    expect((await call("recall", { mode: "skills", entity_id: ctx.entityId })).skills).toEqual(saved.skills);

    // A skill left out of the list is removed.
    const trimmed = await call("ingest", {
      destination: "skills",
      entity_id: ctx.entityId,
      expected_skills: saved.skills,
      skills: saved.skills.filter((s: { id: string }) => s.id !== "obj-2"),
    });
    expect(trimmed.skills.map((s: { id: string }) => s.id)).toEqual(["obj-1", "launch-review"]);
  });

  it("routine: enables a daily routine on a skill named by its caller id, lists it, pauses it, and refuses a stale revision", async () => {
    const ctx = await onboardCompany(h, { credits: 1000 });
    const call = callAs(ctx.token);
    const routine = (settings: Record<string, unknown>) =>
      call("ingest", {
        destination: "routine",
        entity_id: ctx.entityId,
        skill_id: "obj-1",
        routine: { enabled: true, interval_hours: 24, source_mode: "saved", max_charge_cents: 200, ...settings },
      });
    const enabled = await routine({ expected_revision: 0 });
    expect(enabled).toMatchObject({ skill_id: "obj-1", revision: 1, enabled: true, interval_hours: 24 });
    const listed = await call("recall", { mode: "routines", entity_id: ctx.entityId });
    expect(listed.routines).toEqual([expect.objectContaining({ skill_id: "obj-1", revision: 1, enabled: true })]);

    const stale = await refusal(routine({ enabled: false, expected_revision: 0 }));
    expect(stale.status).toBe(409);
    const paused = await routine({ enabled: false, expected_revision: 1 });
    expect(paused).toMatchObject({ skill_id: "obj-1", revision: 2, enabled: false, next_run_at: null });
    expect(await refusal(routine({ enabled: true, expected_revision: 1 }))).toMatchObject({ status: 409 });
  });

  it("dispatches a routine on a caller-named skill on time, and an edit of the skill's title does not stop it", async () => {
    const ctx = await onboardCompany(h, { credits: 5000 });
    const call = callAs(ctx.token);
    const enabled = await call("ingest", {
      destination: "routine",
      entity_id: ctx.entityId,
      skill_id: "obj-2",
      routine: { enabled: true, interval_hours: 24, source_mode: "saved", max_charge_cents: 200, expected_revision: 0 },
    });
    const firstDue = Date.parse(enabled.next_run_at);
    const runsOf = async () =>
      (
        (await call("recall", { mode: "skill_runs", entity_id: ctx.entityId })).runs as {
          skill_id: string;
          routine_occurrence_at: string;
        }[]
      ).filter((r) => r.skill_id === "obj-2");
    const [first] = await waitFor(async () => {
      const runs = await runsOf();
      return runs.length > 0 ? runs : undefined;
    });
    expect(Date.parse(first!.routine_occurrence_at)).toBe(firstDue);

    // The skill's title changes (same id, new revision): the routine keeps running it.
    const read = await call("recall", { mode: "skills", entity_id: ctx.entityId });
    const edited = read.skills.map((s: { id: string; title: string }) => (s.id === "obj-2" ? { ...s, title: "Renamed objective" } : s));
    await call("ingest", { destination: "skills", entity_id: ctx.entityId, expected_skills: read.skills, skills: edited });
    const editedAt = Date.now();
    const later = await waitFor(async () => {
      const runs = await runsOf();
      return runs.some((r) => Date.parse(r.routine_occurrence_at) > editedAt) ? runs : undefined;
    });
    expect(later.length).toBeGreaterThanOrEqual(2);
    const routines = await call("recall", { mode: "routines", entity_id: ctx.entityId });
    expect(routines.routines).toEqual([expect.objectContaining({ skill_id: "obj-2", enabled: true, last_outcome: "dispatched" })]);
  });

  it("skill, skill_runs: runs a skill once by its caller id after the quote is reviewed, and lists the run", async () => {
    const ctx = await onboardCompany(h, { credits: 1000 });
    const call = callAs(ctx.token);
    const requestId = randomUUID();
    const args = { action: "skill", entity_id: ctx.entityId, skill_id: "obj-1", request_id: requestId };

    // Nothing is charged before a price was seen: the first call answers the quote to review.
    const first = await refusal(call("analyze", args));
    expect(first).toMatchObject({
      status: 409,
      details: expect.stringMatching(/^Nothing ran: a run of this skill is estimated at \d+ credits/),
    });
    expect(await h.deps.db.workflowRun.count({ where: { entityId: ctx.entityId } })).toBe(0);
    const quoted = await h.deps.db.quote.findFirstOrThrow({ where: { entityId: ctx.entityId }, orderBy: { createdAt: "desc" } });
    expect(first.details).toContain(`charged at most ${quoted.maxChargeCredits}`);

    // The same call, once reviewed, runs under that quote; a retry with its request_id answers the same run.
    const run = await call("analyze", args);
    expect(run).toMatchObject({ skill_id: "obj-1", entity_id: ctx.entityId, status: "queued", source_mode: "saved" });
    expect(run.links.self).toBe(`/api/entities/${ctx.entityId}/skills/obj-1/runs/${run.id}`);
    expect(await call("analyze", args)).toMatchObject({ id: run.id });

    const runs = await call("recall", { mode: "skill_runs", entity_id: ctx.entityId });
    expect(runs.runs).toEqual([expect.objectContaining({ id: run.id, skill_id: "obj-1" })]);
    const finished = await waitFor(async () => {
      const read = await h.http.get(run.links.self).set("Authorization", `Bearer ${ctx.token}`);
      return ["completed", "failed", "blocked"].includes(read.body.status) ? read.body : undefined;
    }, 30_000);
    expect(finished).toMatchObject({ status: "completed", analysis_id: expect.any(String) });

    // A quote reviewed through the quote route is approved by the client's bare call too, once.
    const quote = await h.http
      .get(`/api/entities/${ctx.entityId}/skills/obj-2/quote?source_mode=saved`)
      .set("Authorization", `Bearer ${ctx.token}`);
    expect(quote.status).toBe(200);
    const second = await call("analyze", { ...args, skill_id: "obj-2", request_id: randomUUID() });
    expect(second).toMatchObject({
      skill_id: "obj-2",
      scope_hash: quote.body.scope_hash,
      max_charge_credits: quote.body.max_charge_credits,
    });
    expect(await refusal(call("analyze", { ...args, skill_id: "obj-2", request_id: randomUUID() }))).toMatchObject({ status: 409 });
  });

  it("resolves a skill stored without a caller id by the uuid it was given", async () => {
    const ctx = await onboardCompany(h, { credits: 1000 });
    const call = callAs(ctx.token);
    const read = await call("recall", { mode: "skills", entity_id: ctx.entityId });
    const saved = await call("ingest", {
      destination: "skills",
      entity_id: ctx.entityId,
      expected_skills: read.skills,
      skills: [...read.skills, { title: "No id given", question: "What do people say?", decision: "d", evidence: "e" }],
    });
    const given = saved.skills[2].id as string;
    expect(given).toMatch(/^[0-9a-f-]{36}$/);
    const row = await h.deps.db.skill.findFirstOrThrow({ where: { entityId: ctx.entityId, key: given } });
    expect(row.id).toBe(given);
    const quote = await h.http.get(`/api/entities/${ctx.entityId}/skills/${given}/quote`).set("Authorization", `Bearer ${ctx.token}`);
    expect(quote.body).toMatchObject({ skill_id: given });
    const routine = await call("ingest", {
      destination: "routine",
      entity_id: ctx.entityId,
      skill_id: given,
      routine: { enabled: false, interval_hours: 168, source_mode: "saved", max_charge_cents: 100, expected_revision: 0 },
    });
    expect(routine).toMatchObject({ skill_id: given, revision: 1 });
  });
});
