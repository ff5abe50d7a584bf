import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearer, createKeyFor } from "../helpers/evidence.js";
import { createHarness, type Harness } from "../helpers/harness.js";

/** GET /agent/v1/ingest/collection-plan: the saved scope and one task per platform and target; starts nothing. */
let h: Harness;
let token: string;
let onboarded: { company: { id: string }; products: { id: string }[]; competitors: { id: string }[] };

const plan = (entityId: string, auth: Record<string, string> = bearer(token)) =>
  h.http.get(`/agent/v1/ingest/collection-plan?entity_id=${encodeURIComponent(entityId)}`).set(auth);

beforeAll(async () => {
  h = await createHarness();
  token = await h.token();
  const res = await h.http
    .post("/api/entities/onboarding")
    .set(bearer(token))
    .send({
      request_id: randomUUID(),
      company: {
        name: "Acme Analytics",
        url: "https://acme.example.com",
        keywords: ["acme"],
        platforms: ["hackernews", "reddit", "web", "twitter", "slack"],
        collection_targets: { twitter: ["@acme", { handle: "@acmehelp" }], docs: ["https://acme.example.com/docs"] },
      },
      products: [{ name: "Acme Dash", keywords: ["dashboards"] }],
      competitors: [{ name: "Globex", url: "https://globex.example.com", keywords: ["globex"] }],
      research_objectives: [
        { id: "churn", title: "Churn", workflow: { inputs: { lookback_days: 30, max_sources: 80 } } },
        { id: "pricing", title: "Pricing", workflow: { inputs: { lookback_days: 14, max_sources: 120 } } },
      ],
    });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  onboarded = res.body;
});
afterAll(() => h.close());

describe("GET /agent/v1/ingest/collection-plan", () => {
  it("answers the company's saved scope with one task per platform and target, built by the collectors' query functions", async () => {
    const res = await plan(onboarded.company.id);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const body = res.body;
    expect(body).toMatchObject({
      entity_id: onboarded.company.id,
      configuration_id: expect.stringMatching(/^plan-[0-9a-f]{32}$/),
      subject: { id: onboarded.company.id, kind: "company", name: "Acme Analytics", keywords: ["acme"] },
      company: { id: onboarded.company.id },
      products: [{ id: onboarded.products[0]?.id, name: "Acme Dash", kind: "product" }],
      competitors: [{ id: onboarded.competitors[0]?.id, name: "Globex", kind: "competitor" }],
      scope: {
        platforms: ["hackernews", "reddit", "web", "twitter", "slack"],
        platforms_basis: "entity",
        // The widest window and the largest source limit among the saved workflows.
        lookback_days: 30,
        max_sources: 120,
        limits_basis: "skills",
      },
      starts_collection: false,
    });
    const days = (Date.parse(body.scope.window.until) - Date.parse(body.scope.window.since)) / 86_400_000;
    expect(days).toBe(30);

    const tasks = body.tasks.map((t: Record<string, unknown>) => [t.platform, t.target_type, t.query, t.server_collector]);
    expect(tasks).toEqual([
      ["hackernews", "search_query", "Acme Analytics acme", true],
      ["reddit", "search_query", '"Acme Analytics" OR acme', true],
      ["web", "url", "https://acme.example.com/", true],
      ["web", "url", "https://acme.example.com/docs", true],
      ["twitter", "search_query", '"Acme Analytics" OR acme', false],
      ["twitter", "account", "@acme", false],
      ["twitter", "account", "@acmehelp", false],
    ]);
    expect(body.count).toBe(7);
    for (const task of body.tasks) {
      expect(task.window).toEqual({ ...body.scope.window, lookback_days: 30 });
      expect(task).toMatchObject({ last_coverage: null, last_run: null, resume_cursor: null });
    }
    // Slack is the team's own: never searched, and the plan says why there is no task.
    expect(body.notes.join(" ")).toMatch(/slack: no saved targets/);
    // Reading a plan starts nothing.
    expect(await h.deps.db.collectionJob.count()).toBe(0);
  });

  it("gives each task its last coverage and the cursor to resume from when that very target stopped early", async () => {
    const before = (await plan(onboarded.company.id)).body;
    const hn = before.tasks.find((t: { platform: string }) => t.platform === "hackernews");
    const reddit = before.tasks.find((t: { platform: string }) => t.platform === "reddit");
    const record = (collector: string, runId: string, target: Record<string, unknown>, state = "bounded") =>
      h.http
        .post("/agent/v1/ingest/coverage")
        .set(bearer(token))
        .send({
          entity_id: onboarded.company.id,
          collector,
          coverage_state: state,
          run_id: runId,
          collection_scope: "agent:last_30_days",
          query: target.target,
          finished_at: "2026-03-01T00:00:00Z",
          targets: [target],
        })
        .expect(200);
    await record("hackernews", "run-1", {
      target: hn.target,
      target_type: "search_query",
      items_found: 40,
      cursor_end: "2",
      reached_end: false,
    });
    await record("reddit", "run-2", { target: reddit.target, items_found: 9, cursor_end: "t3_z", reached_end: true }, "exhaustive");

    const after = (await plan(onboarded.company.id)).body;
    const hnAfter = after.tasks.find((t: { platform: string }) => t.platform === "hackernews");
    expect(hnAfter).toMatchObject({
      task_id: hn.task_id,
      last_coverage: {
        coverage_state: "bounded",
        run_id: "run-1",
        collection_scope: "agent:last_30_days",
        finished_at: "2026-03-01T00:00:00Z",
      },
      last_run: { target: hn.target, items_found: 40, cursor_end: "2", reached_end: false },
      resume_cursor: "2",
    });
    // Read to its end: nothing to resume, the next read starts over.
    const redditAfter = after.tasks.find((t: { platform: string }) => t.platform === "reddit");
    expect(redditAfter).toMatchObject({
      last_coverage: { coverage_state: "exhaustive" },
      last_run: { reached_end: true },
      resume_cursor: null,
    });
    // A platform-level record for other targets gives coverage but no cursor.
    const web = after.tasks.find((t: { platform: string }) => t.platform === "web");
    expect(web).toMatchObject({ last_coverage: null, resume_cursor: null });
  });

  it("plans a competitor with its own terms and its company's platforms", async () => {
    const res = await plan(onboarded.competitors[0]?.id as string);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      subject: { name: "Globex", kind: "competitor" },
      company: { id: onboarded.company.id },
      scope: { platforms_basis: "company", keywords: ["globex"], lookback_days: 30 },
    });
    const queries = res.body.tasks.map((t: { platform: string; query: string }) => `${t.platform}: ${t.query}`);
    // "globex" repeats the name (terms are unique regardless of case).
    expect(queries).toEqual(["hackernews: Globex", "reddit: Globex", "web: https://globex.example.com/", "twitter: Globex"]);
  });

  it("has no tasks for an entity without platforms, and uses the skeleton's window without workflows", async () => {
    const entity = await h.http.post("/api/entities").set(bearer(token)).send({ name: "Loner" }).expect(201);
    const res = await plan(entity.body.id);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      tasks: [],
      count: 0,
      scope: { platforms: [], platforms_basis: "none", lookback_days: 7, max_sources: 25, limits_basis: "default" },
    });
    expect(res.body.notes[0]).toMatch(/No platform is saved/);
  });

  it("is read with a bearer or an ingest key; 404 for entities the caller cannot see; 422 without entity_id", async () => {
    const ingestKey = await createKeyFor(h, token, ["ingest"]);
    const exportKey = await createKeyFor(h, token, ["export"]);
    expect((await plan(onboarded.company.id, { "X-API-Key": ingestKey.raw_key })).status).toBe(200);
    expect((await plan(onboarded.company.id, { "X-API-Key": exportKey.raw_key })).status).toBe(403);

    const stranger = await h.token();
    const foreign = await plan(onboarded.company.id, bearer(stranger));
    expect(foreign.status).toBe(404);
    expect(foreign.body).toEqual({ detail: "Entity was not found.", code: "not_found" });
    expect((await plan("not-a-uuid")).status).toBe(404);

    const missing = await h.http.get("/agent/v1/ingest/collection-plan").set(bearer(token));
    expect(missing.status).toBe(422);
    expect(missing.body.detail[0]).toMatchObject({ loc: ["query", "entity_id"], type: "missing" });
  });
});
