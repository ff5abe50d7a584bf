import { randomUUID } from "node:crypto";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { enrichmentProcessor } from "../../workers/enrichment.js";
import { sweepProcessor } from "../../workers/sweeps.js";
import { bearer } from "../helpers/evidence.js";
import { createHarness, type Harness } from "../helpers/harness.js";

/**
 * The agent client (`@crowdlisten/harness` 2.2.3, unchanged) against this service, over real
 * HTTP: what it reads and writes around the evidence (recall modes collection_plan, actions and
 * intelligence; ingest destinations evidence and observations). The client reads its base URL
 * once, when its module loads.
 */
type HandleV2Tool = (sb: unknown, userId: string, name: string, args: Record<string, unknown>, accessToken: string) => Promise<string>;

let h: Harness;
let server: Server;
let handleV2Tool: HandleV2Tool;
let token: string;
let userId: string;
let company: { id: string };
let competitor: { id: string };
let projectId: string;

const call = async (name: string, args: Record<string, unknown>) => JSON.parse(await handleV2Tool(null, userId, name, args, token));

beforeAll(async () => {
  h = await createHarness({ SWEEP_WAIT_MS: "10000" });
  server = h.app.listen(0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  process.env.CROWDLISTEN_AGENT_URL = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  ({ handleV2Tool } = (await import("@crowdlisten/harness/dist/harness-v2.js")) as unknown as { handleV2Tool: HandleV2Tool });
  token = await h.token();
  const onboarded = await h.http
    .post("/api/entities/onboarding")
    .set(bearer(token))
    .send({
      request_id: randomUUID(),
      company: { name: "Acme Notes", url: "https://acme.example.com", keywords: ["acme"], platforms: ["hackernews", "reddit"] },
      competitors: [{ name: "Globex", keywords: ["globex notes"] }],
    })
    .expect(201);
  company = onboarded.body.company;
  competitor = onboarded.body.competitors[0];
  projectId = onboarded.body.project_id;
  userId = (await h.deps.db.user.findFirstOrThrow({ where: { memberships: { some: { workspaceId: onboarded.body.workspace_id } } } })).id;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await h.close();
});

describe("the agent client's collection plan (recall collection_plan)", () => {
  it("reads the saved scope and tasks of a company and of its competitor", async () => {
    const plan = await call("recall", { mode: "collection_plan", entity_id: company.id });
    expect(plan).toMatchObject({
      entity_id: company.id,
      subject: { name: "Acme Notes" },
      competitors: [{ id: competitor.id, name: "Globex" }],
      scope: { platforms: ["hackernews", "reddit"] },
      starts_collection: false,
    });
    expect(plan.tasks.map((t: { platform: string; query: string }) => [t.platform, t.query])).toEqual([
      ["hackernews", "Acme Notes acme"],
      ["reddit", '"Acme Notes" OR acme'],
    ]);
    const theirs = await call("recall", { mode: "collection_plan", entity_id: competitor.id });
    expect(theirs.tasks.map((t: { query: string }) => t.query)).toEqual(["Globex globex notes", 'Globex OR "globex notes"']);
    // The client refuses a plan without one entity before calling; an unknown entity is the service's 404.
    await expect(call("recall", { mode: "collection_plan", entity_id: randomUUID() })).rejects.toThrow(/"status":404/);
    expect(projectId).toBeTruthy();
  });
});

describe("the agent client's evidence capture (ingest destination evidence)", () => {
  it("stores the original, runs the capture to completion, and answers the same run on a retry", async () => {
    // Both processors of the enrichment queue run, as in a worker process.
    const workers = h.startWorkers({ "enrichment.content.v1": enrichmentProcessor, "sweep.run.v1": sweepProcessor });
    try {
      const args = {
        destination: "evidence",
        entity_id: company.id,
        title: "Workflow trace: export review",
        content: "The CSV export failed twice for the finance team. Support answered quickly and the retry worked.",
        source_platform: "agent",
        author: "codex",
        metadata: { task: "export review" },
      };
      const first = await call("ingest", args);
      expect(first).toMatchObject({
        ingested: true,
        destination: "evidence",
        entity_id: company.id,
        source_platform: "agent",
        collection_run_id: expect.stringMatching(/^harness-evidence-[0-9a-f]{24}$/),
        ingest: { inserted: 1, stored: 1 },
        enrichment: { status: "completed", entity_id: company.id, idempotency_key: first.collection_run_id },
      });
      const stats = first.enrichment.statistics;
      expect(stats.originals).toBe(1);
      expect(stats.enriched + stats.already_enriched).toBe(1);
      expect(stats.remaining).toBe(0);
      const contentId = first.ingest.content_ids[0];
      expect(await h.deps.db.opinionUnit.count({ where: { contentId } })).toBeGreaterThan(0);
      const row = await h.deps.db.content.findUniqueOrThrow({ where: { id: contentId }, include: { enrichment: true } });
      expect(row).toMatchObject({
        collectionScope: "agent_approved",
        coverageState: "bounded",
        enrichment: { enrichedAt: expect.any(Date) },
      });

      // The same evidence again: the original is reused and the capture answers the same run.
      const again = await call("ingest", args);
      expect(again.ingest).toMatchObject({ inserted: 0, skipped_dedup: 1, content_ids: [contentId] });
      expect(again.enrichment).toEqual(first.enrichment);
    } finally {
      await workers.close();
    }
  });
});

describe("the agent client's observations (ingest observations)", () => {
  it("saves feedback snapshots to the project, answers their ids, and answers the same ids on an identical retry", async () => {
    const args = {
      project_id: projectId,
      observations: [
        {
          content: "Dashboard keeps crashing when I filter by date range",
          source_platform: "slack",
          source_id: "slack:T1:C1:1.1",
          observation_type: "bug_report",
          metadata: { channel: "#product-feedback", author: "user123" },
        },
        {
          content: "Would love CSV export for the analytics page",
          source_platform: "discord",
          observation_type: "feature_request",
          entity_id: competitor.id,
        },
      ],
    };
    const saved = await call("ingest", args);
    expect(saved).toMatchObject({
      accepted: 2,
      processing_status: "queued",
      project_id: projectId,
      observations: [
        { index: 0, entity_id: company.id, platform: "slack", status: "created" },
        { index: 1, entity_id: competitor.id, platform: "agent", source_platform: "discord", status: "created" },
      ],
    });
    const retry = await call("ingest", args);
    expect(retry.ids).toEqual(saved.ids);
    expect(retry.inserted).toBe(0);

    // Without a project: the entity the client names is the scope.
    const scoped = await call("ingest", {
      entity_id: company.id,
      observations: [{ content: "Need CSV export", observation_type: "feature_request" }],
    });
    expect(scoped).toMatchObject({ accepted: 1, project_id: null, observations: [{ entity_id: company.id }] });
    // Neither: the 422 names the observation's entity.
    await expect(call("ingest", { observations: [{ content: "Need CSV export" }] })).rejects.toThrow(/"status":422.*entity_id/);
  });
});

describe("the agent client's actions (recall actions)", () => {
  it("reads an entity's saved actions with their evidence, filters and next_offset", async () => {
    const stored = await h.http
      .post("/agent/v1/ingest/content")
      .set(bearer(token))
      .send({
        entity_id: company.id,
        sources: [{ id: "pricing-1", platform: "reddit", content: "The pricing page is confusing for small teams." }],
      })
      .expect(200);
    const record = await h.http
      .post("/agent/v1/knowledge/insights")
      .set(bearer(token))
      .send({
        entity_id: company.id,
        request_id: randomUUID(),
        expected_revision: 0,
        title: "Pricing confuses small teams",
        summary: "Small teams find the pricing page confusing.",
        evidence: [{ content_id: stored.body.content_ids[0], quote: "The pricing page is confusing" }],
      })
      .expect(201);
    for (const objectType of ["pain_point", "research_opportunity"]) {
      await h.http
        .post("/api/sweeps/objects")
        .set(bearer(token))
        .send({ entity_id: company.id, insight_id: record.body.record.id, object_type: objectType })
        .expect(201);
    }

    const first = await call("recall", { mode: "actions", entity_id: company.id, limit: 1 });
    expect(first).toMatchObject({
      entity_id: company.id,
      mode: "actions",
      count: 1,
      total: 2,
      next_offset: 1,
      objects: [
        {
          object_type: "pain_point",
          title: "Pricing confuses small teams",
          status: "open",
          urgency: null,
          impact_score: null,
          signal_count: 1,
          knowledge_ref: { insight_id: record.body.record.id, revision: 1 },
          evidence: [{ quote: "The pricing page is confusing", content_id: stored.body.content_ids[0], available: true }],
        },
      ],
    });
    const rest = await call("recall", { mode: "actions", entity_id: company.id, limit: 1, offset: first.next_offset });
    expect(rest).toMatchObject({ next_offset: null, objects: [{ object_type: "research_opportunity" }] });
    const typed = await call("recall", { mode: "actions", entity_id: company.id, object_type: "research_opportunity", status: "open" });
    expect(typed.objects).toHaveLength(1);
    const none = await call("recall", { mode: "actions", entity_id: company.id, status: "done" });
    expect(none).toMatchObject({ count: 0, objects: [], next_offset: null });
  });
});

describe("the agent client's intelligence (recall intelligence)", () => {
  it("reads the summary of an entity's stored evidence over a window", async () => {
    const day = 86_400_000;
    const stored = await h.http
      .post("/agent/v1/ingest/content")
      .set(bearer(token))
      .send({
        entity_id: company.id,
        sources: [
          {
            id: "intel-1",
            platform: "reddit",
            content: "The price is way too expensive for what it does.",
            published_at: new Date(Date.now() - day).toISOString(),
          },
          {
            id: "intel-2",
            platform: "hackernews",
            content: "Honestly the pricing is too expensive and I cancelled.",
            published_at: new Date(Date.now() - 2 * day).toISOString(),
          },
        ],
      })
      .expect(200);
    const workers = h.startWorkers({ "sweep.run.v1": sweepProcessor });
    try {
      const capture = await call("ingest", {
        destination: "evidence",
        entity_id: company.id,
        title: "Pricing review",
        content: "Pricing is too expensive for small teams.",
      });
      expect(capture.enrichment.status).toBe("completed");
    } finally {
      await workers.close();
    }
    expect(stored.body.inserted).toBe(2);

    // The client clamps window_days to 7–365 before calling.
    const summary = await call("recall", { mode: "intelligence", entity_id: company.id, window_days: 3 });
    expect(summary).toMatchObject({ entity_id: company.id, window_days: 7, entity: { name: "Acme Notes" } });
    const pricing = summary.themes.find((t: { aspect: string }) => t.aspect === "pricing");
    expect(pricing).toMatchObject({ polarity: "complaint", change: "new" });
    expect(pricing.sources).toBeGreaterThanOrEqual(2);
    expect(pricing.quotes.length).toBeGreaterThanOrEqual(1);
    expect(summary.platforms.map((p: { platform: string }) => p.platform)).toEqual(expect.arrayContaining(["reddit", "hackernews"]));
    expect(summary.basis.counts).toMatch(/never of people/);
    await expect(call("recall", { mode: "intelligence", entity_id: randomUUID() })).rejects.toThrow(/"status":404/);
  });
});
