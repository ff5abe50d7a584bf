import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sliceCodePoints } from "../../src/insights/enrichment/opinions.js";
import { analysisProcessor } from "../../workers/analysis.js";
import { enrichmentProcessor } from "../../workers/enrichment.js";
import { createHarness, type Harness } from "../helpers/harness.js";
import { CORPUS, SUMMARY_TEXT } from "./corpus.js";
import { createTenant, storeSources, type Tenant, waitFor } from "./fixtures.js";
import { listen, openStream, type ParsedEvent } from "./sse-client.js";

let h: Harness;
let base: string;
let closeServer: () => Promise<void>;
let tenant: Tenant;
let ids: string[];
let knowledgeId: string;

beforeAll(async () => {
  h = await createHarness({ SSE_HEARTBEAT_MS: "100" });
  ({ baseUrl: base, close: closeServer } = await listen(h));
  tenant = await createTenant(h);
  h.startWorkers({ "analysis.run.v1": analysisProcessor, "enrichment.content.v1": enrichmentProcessor });
  ids = await storeSources(h, tenant, CORPUS);
  const knowledge = await h.deps.db.knowledge.create({
    data: {
      entityId: tenant.entityId,
      workspaceId: tenant.workspaceId,
      kind: "summary",
      platform: "meetingnotes",
      externalId: "not_1",
      content: SUMMARY_TEXT,
    },
  });
  knowledgeId = knowledge.id;
  // Ingest queued enrichment; the analyses below read the stored embeddings and units.
  await waitFor(async () =>
    (await h.deps.db.content.count({ where: { id: { in: ids }, enrichment: { enrichedAt: { not: null } } } })) === ids.length
      ? true
      : undefined,
  );
});
afterAll(async () => {
  await closeServer();
  await h.close();
});

const run = (body: Record<string, unknown>, token = tenant.token) =>
  openStream(`${base}/agent/v1/analysis/run`, { method: "POST", token, body });

/** Every quote of a result, checked against the stored row it cites. */
async function expectVerbatim(evidence: { content_id: string; quote: string; start_offset: number; end_offset: number }[]) {
  const rows = await h.deps.db.content.findMany({ where: { id: { in: evidence.map((e) => e.content_id) } } });
  for (const e of evidence) {
    const row = rows.find((r) => r.id === e.content_id);
    expect(row, `cited row ${e.content_id} is a stored original`).toBeDefined();
    expect(row!.content.includes(e.quote)).toBe(true);
    expect(sliceCodePoints(row!.content, e.start_offset, e.end_offset)).toBe(e.quote);
    expect(e.content_id).not.toBe(knowledgeId);
    expect(SUMMARY_TEXT.includes(e.quote)).toBe(false);
  }
}

function expectWellFormed(events: ParsedEvent[], analysisId: string) {
  expect(events.map((e) => e.id)).toEqual(events.map((_, i) => i + 1));
  for (const e of events) expect(e.data.analysis_id).toBe(analysisId);
  const terminal = events.filter((e) => e.event === "result" || e.event === "error");
  expect(terminal).toHaveLength(1);
  expect(events.at(-1)).toBe(terminal[0]);
}

describe("POST /agent/v1/analysis/run", () => {
  let first: { id: string; events: ParsedEvent[] };

  it("streams progress in order, the evidence, then one result whose every quote is verbatim in the cited row", async () => {
    const stream = await run({ question: "What do users think about Acme pricing?", entity_id: tenant.entityId });
    expect(stream.status).toBe(200);
    expect(stream.headers.get("content-type")).toMatch(/^text\/event-stream/);
    expect(stream.headers.get("x-accel-buffering")).toBe("no");
    expect(stream.headers.get("cache-control")).toMatch(/no-cache/);
    const analysisId = stream.headers.get("x-analysis-id")!;
    expect(analysisId).toMatch(/^[0-9a-f-]{36}$/);
    await stream.closed;
    const events = stream.events;
    expectWellFormed(events, analysisId);

    const progress = events.filter((e) => e.event === "progress");
    expect(progress.map((e) => e.data.step)).toEqual(["scope", "retrieve", "opinions", "themes", "evidence", "finalize"]);
    const values = progress.map((e) => e.data.progress as number);
    expect([...values].sort((a, b) => a - b)).toEqual(values);
    for (const p of progress) expect(p.data).toMatchObject({ status: "running", progress: expect.any(Number) });
    expect(values.every((v) => v > 0 && v < 1)).toBe(true);

    const result = events.at(-1)!;
    expect(result.event).toBe("result");
    expect(result.data.status).toBe("completed");
    const data = result.data.data as {
      answer: string;
      citations: { number: number; content_id: string; quote: string }[];
      insights: {
        title: string;
        summary: string;
        sentiment: string;
        confidence: number;
        evidence: { number: number; content_id: string; quote: string }[];
      }[];
      evidence: {
        number: number;
        content_id: string;
        quote: string;
        url: string;
        platform: string;
        author: string;
        published_at: string | null;
        start_offset: number;
        end_offset: number;
      }[];
      coverage: Record<string, { in_scope: number; retrieved: number; cited: number }>;
      limitations: string[];
      engine: string;
    };
    expect(data.engine).toBe("extractive");
    expect(data.insights.length).toBeGreaterThanOrEqual(1);
    expect(data.insights[0]!.title.toLowerCase()).toContain("pricing");
    expect(["negative", "mixed"]).toContain(data.insights[0]!.sentiment);
    for (const insight of data.insights) {
      expect(insight.confidence).toBeGreaterThan(0);
      expect(insight.confidence).toBeLessThanOrEqual(1);
      expect(insight.evidence.length).toBeGreaterThan(0);
      for (const e of insight.evidence) expect(data.evidence[e.number - 1]).toEqual(e);
    }
    expect(new Set(data.evidence.map((e) => e.content_id)).size).toBeGreaterThanOrEqual(2);
    await expectVerbatim(data.evidence);

    // Evidence events carry exactly the result's evidence, before the result.
    const evidenceEvents = events.filter((e) => e.event === "evidence");
    expect(evidenceEvents.map(({ data: { analysis_id: _a, ...item } }) => item)).toEqual(data.evidence);

    // Numbered citations: every [n] in the answer is a citation, and citations match evidence.
    const cited = [...data.answer.matchAll(/\[(\d+)\]/g)].map((m) => Number(m[1]));
    expect(cited.length).toBeGreaterThan(0);
    for (const n of cited) expect(data.citations.find((c) => c.number === n)).toBeDefined();
    expect(data.citations).toEqual(data.evidence.map((e) => ({ number: e.number, content_id: e.content_id, quote: e.quote })));
    expect(data.coverage.reddit).toMatchObject({ in_scope: 2 });
    expect(Object.values(data.coverage).reduce((n, c) => n + c.cited, 0)).toBe(new Set(data.evidence.map((e) => e.content_id)).size);

    // Stored: the insights and their evidence, quotes verbatim in the database too.
    const insights = await h.deps.db.entityInsight.findMany({ where: { analysisId }, include: { evidence: true } });
    expect(insights.map((i) => i.title).sort()).toEqual(data.insights.map((i) => i.title).sort());
    expect(insights.every((i) => i.entityId === tenant.entityId)).toBe(true);
    const [mismatch] = await h.deps.db.$queryRaw<{ n: bigint }[]>`
      SELECT count(*) AS n FROM insight_evidence e
      JOIN entity_insights i ON i.id = e.insight_id
      LEFT JOIN content_store c ON c.id = e.content_id
      WHERE i.analysis_id = ${analysisId}::uuid
        AND (c.id IS NULL OR strpos(c.content, e.quote) = 0
             OR substr(c.content, e.start_offset + 1, e.end_offset - e.start_offset) <> e.quote)`;
    expect(Number(mismatch?.n)).toBe(0);
    first = { id: analysisId, events };
  });

  it("GET /agent/v1/analysis/{id} answers the row with the same result", async () => {
    const res = await h.http.get(`/agent/v1/analysis/${first.id}`).set("Authorization", `Bearer ${tenant.token}`);
    expect(res.status).toBe(200);
    const last = first.events.at(-1)!;
    expect(res.body).toMatchObject({
      analysis_id: first.id,
      status: "completed",
      question: "What do users think about Acme pricing?",
      entity_id: tenant.entityId,
      depth: "brief",
      events_url: `/agent/v1/analysis/${first.id}/events`,
      finished_at: expect.any(String),
    });
    expect(res.body.result).toEqual({ status: last.data.status, data: last.data.data });
  });

  it("the events route replays the stream exactly, and resumes after Last-Event-ID", async () => {
    const replay = await openStream(`${base}/agent/v1/analysis/${first.id}/events`, { token: tenant.token });
    expect(replay.headers.get("x-analysis-id")).toBe(first.id);
    await replay.closed;
    expect(replay.events).toEqual(first.events);

    const resumed = await openStream(`${base}/agent/v1/analysis/${first.id}/events`, {
      token: tenant.token,
      headers: { "Last-Event-ID": "3" },
    });
    await resumed.closed;
    expect(resumed.events).toEqual(first.events.slice(3));

    const viaQuery = await openStream(`${base}/agent/v1/analysis/${first.id}/events?last_event_id=5`, { token: tenant.token });
    await viaQuery.closed;
    expect(viaQuery.events[0]?.id).toBe(6);
  });

  it("a client that disconnects mid-stream does not stop the analysis, drops its subscription, and can replay everything", async () => {
    const stream = await run({ question: "How do people feel about onboarding and support?", entity_id: tenant.entityId, depth: "deep" });
    const analysisId = stream.headers.get("x-analysis-id")!;
    await stream.until((events) => events.length >= 1);
    stream.abort();
    await stream.closed;
    await waitFor(async () => (h.deps.pubsub.channelCount === 0 ? true : undefined), 5000, "subscription to be dropped");

    const finished = await waitFor(async () => {
      const row = await h.deps.db.analysis.findUnique({ where: { id: analysisId } });
      return row && ["completed", "partial", "failed"].includes(row.status) ? row : undefined;
    });
    expect(finished.status).toBe("completed");

    const replay = await openStream(`${base}/agent/v1/analysis/${analysisId}/events`, { token: tenant.token });
    await replay.closed;
    expectWellFormed(replay.events, analysisId);
    expect(replay.events[0]).toEqual(stream.events[0]);
    expect(replay.events.at(-1)?.event).toBe("result");
    const data = replay.events.at(-1)!.data.data as {
      evidence: { content_id: string; quote: string; start_offset: number; end_offset: number }[];
      insights: unknown[];
    };
    expect(data.insights.length).toBeGreaterThanOrEqual(2);
    await expectVerbatim(data.evidence);
  });

  it("the same request_id answers the same analysis; a different request under it is a 409", async () => {
    const body = { question: "Is the dashboard liked?", entity_id: tenant.entityId, request_id: "req-dashboard-1" };
    const a = await run(body);
    await a.closed;
    const b = await run({ ...body, platforms: null, unknown_field: true });
    await b.closed;
    expect(b.headers.get("x-analysis-id")).toBe(a.headers.get("x-analysis-id"));
    expect(b.events).toEqual(a.events);
    expect(await h.deps.db.analysis.count({ where: { requestId: "req-dashboard-1" } })).toBe(1);

    const conflict = await run({ ...body, question: "Something else?" });
    expect(conflict.status).toBe(409);
    expect(conflict.json).toMatchObject({ code: "idempotency_conflict" });
  });
});

describe("access", () => {
  it("run takes only a user bearer: API keys are refused with 401, whatever their scope", async () => {
    const key = await h.http
      .post("/api/user/keys")
      .set("Authorization", `Bearer ${tenant.token}`)
      .send({ name: "all", scopes: ["*"] });
    const res = await h.http.post("/agent/v1/analysis/run").set("X-API-Key", key.body.raw_key).send({ question: "pricing?" });
    expect(res.status).toBe(401);
    expect(res.body.code).toBe("bearer_required");
    expect(await h.deps.db.analysis.count({ where: { question: "pricing?" } })).toBe(0);
  });

  it("reads take a bearer or a key with '*', for the owner only (404 for anyone else)", async () => {
    const analysis = await h.deps.db.analysis.findFirstOrThrow({ where: { userId: tenant.userId } });
    const all = await h.http
      .post("/api/user/keys")
      .set("Authorization", `Bearer ${tenant.token}`)
      .send({ name: "all", scopes: ["*"] });
    const ingest = await h.http.post("/api/user/keys").set("Authorization", `Bearer ${tenant.token}`).send({ name: "ingest" });
    expect((await h.http.get(`/agent/v1/analysis/${analysis.id}`).set("X-API-Key", all.body.raw_key)).status).toBe(200);
    expect((await h.http.get(`/agent/v1/analysis/${analysis.id}`).set("X-API-Key", ingest.body.raw_key)).status).toBe(403);

    const stranger = await h.token();
    const other = await h.http.get(`/agent/v1/analysis/${analysis.id}`).set("Authorization", `Bearer ${stranger}`);
    expect(other.status).toBe(404);
    expect(other.body.code).toBe("not_found");
    const events = await openStream(`${base}/agent/v1/analysis/${analysis.id}/events`, { token: stranger });
    expect(events.status).toBe(404);
    const unknown = await h.http
      .get("/agent/v1/analysis/00000000-0000-4000-8000-000000000000")
      .set("Authorization", `Bearer ${tenant.token}`);
    expect(unknown.status).toBe(404);
    const malformed = await h.http.get("/agent/v1/analysis/not-a-uuid").set("Authorization", `Bearer ${tenant.token}`);
    expect(malformed.status).toBe(404);
    expect(malformed.body.code).toBe("not_found");
  });

  it("ids the caller cannot see answer 404 and start nothing", async () => {
    const other = await createTenant(h, "Globex");
    const [foreignRow] = await storeSources(h, other, [{ platform: "reddit", content: "Globex pricing is a secret of Globex users." }]);
    const before = await h.deps.db.analysis.count();
    for (const body of [
      { question: "pricing?", entity_id: other.entityId },
      { question: "pricing?", project_id: other.projectId },
      { question: "pricing?", provided_sources: [{ content_id: foreignRow }] },
      { question: "pricing?", entity_id: "00000000-0000-4000-8000-000000000000" },
    ]) {
      const res = await run(body);
      expect(res.status, JSON.stringify(body)).toBe(404);
      expect(res.json).toMatchObject({ code: "not_found" });
    }
    expect(await h.deps.db.analysis.count()).toBe(before);
  });

  it("validates the body with the spec's 422 shape", async () => {
    for (const [body, loc] of [
      [{}, ["body", "question"]],
      [{ question: "" }, ["body", "question"]],
      [{ question: "x".repeat(1001) }, ["body", "question"]],
      [{ question: "q", depth: "medium" }, ["body", "depth"]],
      [{ question: "q", search_mode: "everything" }, ["body", "search_mode"]],
      [{ question: "q", platforms: ["myspace"] }, ["body", "platforms", 0]],
      [{ question: "q", entity_id: "acme" }, ["body", "entity_id"]],
      [{ question: "q", request_id: "short" }, ["body", "request_id"]],
      [{ question: "q", provided_sources: [{ content_id: "nope" }] }, ["body", "provided_sources", 0, "content_id"]],
    ] as const) {
      const res = await h.http.post("/agent/v1/analysis/run").set("Authorization", `Bearer ${tenant.token}`).send(body);
      expect(res.status, JSON.stringify(body)).toBe(422);
      expect(res.body.detail[0]).toMatchObject({ loc, msg: expect.any(String), type: expect.any(String) });
    }
  });
});
