import { randomUUID } from "node:crypto";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { Progress } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { appendEvent } from "../../src/insights/analysis/events.js";
import { analysisProcessor } from "../../workers/analysis.js";
import { enrichmentProcessor } from "../../workers/enrichment.js";
import { CORPUS } from "../analysis/corpus.js";
import { createTenant, storeSources, type Tenant, waitFor } from "../analysis/fixtures.js";
import { createKeyFor } from "../helpers/evidence.js";
import { createHarness, type Harness } from "../helpers/harness.js";
import { type Listening, listen } from "../reliability/support/http.js";
import { onboardCompany } from "../runs/helpers.js";
import { type Connected, callTool, connect, ok, refused } from "./support.js";

/**
 * `analyze` over MCP: an analysis streamed to its final result with progress notifications,
 * a durable research job and its status, and a saved skill's run (quote first, then the run).
 */
let h: Harness;
let server: Listening;
let tenant: Tenant;
let ids: string[];
let connected: Connected;
let client: Client;

beforeAll(async () => {
  h = await createHarness({ SSE_HEARTBEAT_MS: "200" });
  server = await listen(h.app);
  tenant = await createTenant(h);
  h.startWorkers({ "analysis.run.v1": analysisProcessor, "enrichment.content.v1": enrichmentProcessor });
  ids = await storeSources(h, tenant, CORPUS);
  await waitFor(async () =>
    (await h.deps.db.content.count({ where: { id: { in: ids }, enrichment: { enrichedAt: { not: null } } } })) === ids.length
      ? true
      : undefined,
  );
  connected = await connect(server.url, { bearer: tenant.token });
  client = connected.client;
});
afterAll(async () => {
  await connected?.close();
  await server?.close();
  await h?.close();
});

type Evidence = { content_id: string; quote: string; start_offset: number; end_offset: number };

describe("analyze run", () => {
  it("answers the final result, every quote verbatim in its original, with progress notifications on the way", async () => {
    const progress: Progress[] = [];
    const answer = await callTool(
      client,
      "analyze",
      { question: "What do users think about Acme pricing?", entity_id: tenant.entityId, request_id: `mcp-run-${randomUUID()}` },
      { onprogress: (p) => progress.push(p) },
    );
    expect(answer.isError, answer.text).toBe(false);
    const result = answer.body as {
      analysis_id: string;
      status: string;
      data: { evidence: Evidence[]; insights: unknown[]; answer: string };
    };
    expect(result.status).toBe("completed");
    expect(result.data.insights.length).toBeGreaterThan(0);
    expect(result.data.evidence.length).toBeGreaterThan(0);
    const rows = await h.deps.db.content.findMany({ where: { id: { in: result.data.evidence.map((e) => e.content_id) } } });
    for (const e of result.data.evidence) expect(rows.find((r) => r.id === e.content_id)?.content).toContain(e.quote);

    // The stored record says the same.
    const stored = await h.http.get(`/agent/v1/analysis/${result.analysis_id}`).set("Authorization", `Bearer ${tenant.token}`).expect(200);
    expect(stored.body).toMatchObject({ status: result.status, result: { status: result.status, data: result.data } });

    // Progress: the engine's steps, rising, ending at 100 of 100.
    expect(progress.length).toBeGreaterThanOrEqual(3);
    const values = progress.map((p) => p.progress);
    expect([...values].sort((a, b) => a - b)).toEqual(values);
    expect(new Set(values).size).toBe(values.length);
    expect(progress.every((p) => p.total === 100)).toBe(true);
    expect(progress.at(-1)).toMatchObject({ progress: 100, message: "result" });
    expect(progress.map((p) => p.message)).toEqual(expect.arrayContaining(["retrieve", "themes"]));
  });

  it("answers the same analysis for the same request_id (without progress when none is asked for), and 409 for another question under it", async () => {
    const requestId = `mcp-replay-${randomUUID()}`;
    const first = await ok(client, "analyze", {
      action: "run",
      question: "How is the Acme onboarding?",
      entity_id: tenant.entityId,
      request_id: requestId,
    });
    const again = await ok(client, "analyze", {
      action: "run",
      question: "How is the Acme onboarding?",
      entity_id: tenant.entityId,
      request_id: requestId,
    });
    expect(again).toEqual(first);
    const conflict = await refused(client, "analyze", { question: "Something else?", entity_id: tenant.entityId, request_id: requestId });
    expect(conflict).toMatchObject({ status: 409, code: "idempotency_conflict", analysis_id: first.analysis_id });
  });

  it("analyses exactly the given content_ids, and answers 404 for an original the caller cannot see", async () => {
    const answer = await ok(client, "analyze", { question: "What about pricing?", content_ids: [ids[0]] });
    const evidence = (answer.data as { evidence: Evidence[] }).evidence;
    expect(evidence.every((e) => e.content_id === ids[0])).toBe(true);
    const missing = await refused(client, "analyze", { question: "What about pricing?", content_ids: [randomUUID()] });
    expect(missing).toMatchObject({ status: 404, code: "not_found" });
  });

  it("ends with a tool error carrying the failure when the analysis failed", async () => {
    const requestId = `mcp-failed-${randomUUID()}`;
    const row = await h.deps.db.analysis.create({
      data: {
        userId: tenant.userId,
        requestId,
        question: "Will this fail?",
        searchMode: "multi_source",
        depth: "brief",
        status: "failed",
        error: "The engine broke.",
      },
    });
    await appendEvent(h.deps, row.id, "error", { status: "failed", detail: "The engine broke." });
    const failed = await refused(client, "analyze", { question: "Will this fail?", request_id: requestId });
    expect(failed).toEqual({ status: 200, code: "analysis_failed", analysis_id: row.id, detail: "The engine broke." });
  });

  it("stops reading when the client cancels; the analysis runs on to its result", async () => {
    const controller = new AbortController();
    const requestId = `mcp-cancel-${randomUUID()}`;
    const call = client.callTool(
      { name: "analyze", arguments: { question: "Is Acme support good?", entity_id: tenant.entityId, request_id: requestId } },
      undefined,
      { signal: controller.signal, onprogress: () => controller.abort("enough") },
    );
    await expect(call).rejects.toThrow();
    const analysis = await waitFor(() =>
      h.deps.db.analysis.findFirst({ where: { userId: tenant.userId, requestId } }).then((r) => r ?? undefined),
    );
    await waitFor(async () =>
      ["completed", "partial"].includes((await h.deps.db.analysis.findUniqueOrThrow({ where: { id: analysis.id } })).status)
        ? true
        : undefined,
    );
    await waitFor(async () => (h.deps.pubsub.channelCount === 0 ? true : undefined), 5000, "the stream's subscription to be dropped");
  });

  it("refuses an API key, as the streaming route does (a user bearer only)", async () => {
    const key = await createKeyFor(h, tenant.token, ["*"]);
    const keyed = await connect(server.url, { apiKey: key.raw_key });
    try {
      expect(await refused(keyed.client, "analyze", { question: "Pricing?" })).toMatchObject({ status: 401, code: "bearer_required" });
    } finally {
      await keyed.close();
    }
  });
});

describe("recall theme_sources", () => {
  it("reads every source behind an insight of an analysis run here, as its route answers, a page at a time", async () => {
    const run = await ok(client, "analyze", {
      question: "What do users complain about and praise?",
      entity_id: tenant.entityId,
      depth: "deep",
    });
    const { analysis_id: analysisId, data } = run as {
      analysis_id: string;
      data: { insights: { id: number; sources: number; sources_url: string }[] };
    };
    const insight = data.insights[0] as { id: number; sources: number; sources_url: string };
    const http = await h.http.get(insight.sources_url).query({ limit: "1" }).set("Authorization", `Bearer ${tenant.token}`).expect(200);
    const first = await ok(client, "recall", { mode: "theme_sources", analysis_id: analysisId, insight: insight.id, limit: 1 });
    expect(first).toEqual(http.body);
    // Following next_cursor, then in the newest order: every source the insight counts.
    const seen = [...(first.sources as { content_id: string }[])];
    let cursor = first.next_cursor as string | null;
    while (cursor) {
      const next = await ok(client, "recall", { mode: "theme_sources", analysis_id: analysisId, insight: insight.id, limit: 1, cursor });
      seen.push(...(next.sources as { content_id: string }[]));
      cursor = next.next_cursor as string | null;
    }
    expect(seen.length).toBe(insight.sources);
    const newest = await ok(client, "recall", { mode: "theme_sources", analysis_id: analysisId, insight: insight.id, sort: "newest" });
    expect((newest.sources as { content_id: string }[]).map((s) => s.content_id).sort()).toEqual(seen.map((s) => s.content_id).sort());

    expect((await refused(client, "recall", { mode: "theme_sources", analysis_id: analysisId })).detail).toEqual([
      expect.objectContaining({ loc: ["arguments", "insight"], type: "missing" }),
    ]);
    expect(await refused(client, "recall", { mode: "theme_sources", analysis_id: analysisId, insight: 99 })).toMatchObject({
      status: 404,
      code: "not_found",
    });
    const stranger = await createTenant(h, "Globex");
    const theirs = await connect(server.url, { bearer: stranger.token });
    try {
      expect(await refused(theirs.client, "recall", { mode: "theme_sources", analysis_id: analysisId, insight: 1 })).toMatchObject({
        status: 404,
      });
    } finally {
      await theirs.close();
    }
  });
});

describe("analyze start and status", () => {
  it("starts a durable research job for the entity (request_id as its idempotency key) and reads its status", async () => {
    const key = await createKeyFor(h, tenant.token, ["ingest"]);
    const keyed = await connect(server.url, { apiKey: key.raw_key });
    try {
      const args = {
        action: "start",
        question: "Where does onboarding fail?",
        entity_id: tenant.entityId,
        platforms: ["reddit"],
        request_id: `mcp-job-${randomUUID()}`,
      };
      const job = await ok(keyed.client, "analyze", args);
      expect(job).toMatchObject({
        status: "queued",
        entity_id: tenant.entityId,
        job_id: expect.any(String),
        next: expect.stringContaining("/agent/v1/ingest/research/jobs/"),
      });
      expect(await ok(keyed.client, "analyze", args)).toMatchObject({ job_id: job.job_id });
      const row = await h.deps.db.collectionJob.findUniqueOrThrow({ where: { id: job.job_id as string } });
      expect(row).toMatchObject({ objective: "Where does onboarding fail?", collectionOnly: false });

      const status = await ok(keyed.client, "analyze", { action: "status", job_id: job.job_id });
      const http = await h.http.get(`/agent/v1/ingest/research/jobs/${job.job_id}`).set("X-API-Key", key.raw_key).expect(200);
      expect(status).toEqual(http.body);
      expect(await refused(keyed.client, "analyze", { action: "status", job_id: randomUUID() })).toMatchObject({ status: 404 });
      expect(await refused(keyed.client, "analyze", { action: "start", entity_id: tenant.entityId })).toMatchObject({
        status: 422,
        detail: [{ loc: ["arguments", "question"], type: "missing" }],
      });
    } finally {
      await keyed.close();
    }
  });
});

describe("analyze skill", () => {
  it("answers a quote without an approved maximum, then runs once under request_id; a retry replays the run", async () => {
    const ctx = await onboardCompany(h, { credits: 1000 });
    const owner = await connect(server.url, { bearer: ctx.token });
    try {
      const base = { action: "skill", entity_id: ctx.entityId, skill_id: ctx.skills[0]!.id, request_id: `mcp-skill-${randomUUID()}` };
      const offer = await ok(owner.client, "analyze", base);
      expect(offer).toMatchObject({
        status: "approval_required",
        quote: { skill_id: ctx.skills[0]!.id, source_mode: "saved", scope_hash: expect.stringMatching(/^[0-9a-f]{64}$/) },
        next: { ...base, scope_hash: expect.any(String), max_charge_credits: expect.any(Number) },
      });
      expect(await h.deps.db.workflowRun.count({ where: { entityId: ctx.entityId } })).toBe(0);

      const next = offer.next as Record<string, unknown>;
      const run = await ok(owner.client, "analyze", next);
      expect(run).toMatchObject({ skill_id: ctx.skills[0]!.id, status: "queued", source_mode: "saved", replayed: false });
      const again = await ok(owner.client, "analyze", next);
      expect(again).toEqual({ ...run, replayed: true });
      expect(await refused(owner.client, "analyze", { ...next, max_charge_credits: Number(next.max_charge_credits) - 1 })).toMatchObject({
        status: 409,
        code: "idempotency_conflict",
      });
      expect(await refused(owner.client, "analyze", { ...base, question: "Something else?" })).toMatchObject({
        status: 422,
        detail: [{ loc: ["arguments", "question"] }],
      });
    } finally {
      await owner.close();
    }
  });
});
