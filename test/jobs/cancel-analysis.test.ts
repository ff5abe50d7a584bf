import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { analysisJobId } from "../../src/insights/analysis/jobs.js";
import { analysisProcessor } from "../../workers/analysis.js";
import { enrichmentProcessor } from "../../workers/enrichment.js";
import type { WorkerHandles } from "../../workers/runtime.js";
import { CORPUS } from "../analysis/corpus.js";
import { createTenant, storeSources, type Tenant, waitFor } from "../analysis/fixtures.js";
import { listen, openStream, type ParsedEvent } from "../analysis/sse-client.js";
import { bearer, until } from "../collection/support.js";
import { createHarness, type Harness } from "../helpers/harness.js";
import { expectEndedConflict, gate, trackEnds } from "./support.js";

/**
 * Cancelling analyses on real PostgreSQL, Redis and a BullMQ worker. The analysis is made to
 * sit mid-run by a local OpenAI-compatible endpoint (LLM_BASE_URL) that holds its answer to the
 * synthesis step; the cancel must end the stream with `error {status: cancelled}` within 2 s,
 * stop the worker within 2 s, and nothing the worker does afterwards may overwrite the row.
 */
let h: Harness;
let base: string;
let closeServer: () => Promise<void>;
let tenant: Tenant;
let llm: Server;
let llmRequests = 0;
let llmAborted = 0;
const held = gate();
let workers: WorkerHandles;
let tracker: ReturnType<typeof trackEnds>;
const processors = { "analysis.run.v1": analysisProcessor, "enrichment.content.v1": enrichmentProcessor };

beforeAll(async () => {
  llm = createServer((req, res) => {
    llmRequests += 1;
    req.resume();
    res.on("close", () => {
      if (!res.writableEnded) llmAborted += 1;
    });
    void held.wait().then(() => {
      if (res.destroyed) return;
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ choices: [{ message: { content: JSON.stringify({ answer: "Pricing [1].", summaries: [] }) } }] }));
    });
  });
  await new Promise<void>((resolve) => llm.listen(0, "127.0.0.1", resolve));
  const llmUrl = `http://127.0.0.1:${(llm.address() as AddressInfo).port}/v1`;
  h = await createHarness({ SSE_HEARTBEAT_MS: "100", LLM_BASE_URL: llmUrl, LLM_TIMEOUT_MS: "30000" });
  ({ baseUrl: base, close: closeServer } = await listen(h));
  tenant = await createTenant(h);
  workers = h.startWorkers(processors);
  tracker = trackEnds(workers);
  const ids = await storeSources(h, tenant, CORPUS);
  await waitFor(async () =>
    (await h.deps.db.content.count({ where: { id: { in: ids }, enrichment: { enrichedAt: { not: null } } } })) === ids.length
      ? true
      : undefined,
  );
});
afterAll(async () => {
  held.open();
  await closeServer?.();
  await h?.close();
  llm?.closeAllConnections();
  await new Promise((resolve) => llm?.close(resolve));
});

const QUESTION = { question: "What do users think about Acme pricing?" };
const run = (body: Record<string, unknown>, token = tenant.token) =>
  openStream(`${base}/agent/v1/analysis/run`, { method: "POST", token, body: { entity_id: tenant.entityId, ...body } });
const cancel = (id: string, token = tenant.token) => h.http.post(`/agent/v1/analysis/${id}/cancel`).set(bearer(token));
const read = (id: string, token = tenant.token) => h.http.get(`/agent/v1/analysis/${id}`).set(bearer(token));

function expectCancelledStream(events: ParsedEvent[]) {
  expect(events.map((e) => e.id)).toEqual(events.map((_, i) => i + 1));
  const terminal = events.filter((e) => e.event === "result" || e.event === "error");
  expect(terminal).toHaveLength(1);
  expect(events.at(-1)).toBe(terminal[0]);
  expect(terminal[0]!.data).toMatchObject({ status: "cancelled", detail: expect.any(String) });
}

describe("cancelling an analysis", { timeout: 30_000 }, () => {
  it("ends a running analysis's stream with error {status: cancelled} within 2 s and the worker stops", async () => {
    const before = llmRequests;
    const stream = await run({ ...QUESTION, request_id: "cancel-mid-run" });
    expect(stream.status).toBe(200);
    const id = stream.headers.get("x-analysis-id")!;
    // The engine reached the synthesis step and waits on the language model.
    await stream.until((events) => events.some((e) => e.data.step === "synthesis"));
    await until(async () => llmRequests > before);
    expect((await read(id)).body.status).toBe("running");

    const startedAt = Date.now();
    const res = await cancel(id);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ analysis_id: id, status: "cancelled", error: expect.any(String) });
    await stream.until((events) => events.some((e) => e.event === "error"), 2000);
    const latencyMs = Date.now() - startedAt;
    expect(latencyMs).toBeLessThan(2000);
    await stream.closed;
    expectCancelledStream(stream.events);

    // The worker stops within 2 s too: the held call to the model is aborted, not waited out.
    const end = await tracker.endOf(analysisJobId(id), 5000);
    expect(end.value).toMatchObject({ status: "cancelled" });
    expect(end.at - startedAt).toBeLessThan(2000);
    await until(async () => llmAborted > 0);

    const after = await read(id);
    expect(after.body).toMatchObject({ status: "cancelled", result: null, finished_at: expect.any(String) });
    const events = await h.deps.db.analysisEvent.findMany({ where: { analysisId: id }, orderBy: { seq: "asc" } });
    expect(events.at(-1)).toMatchObject({ event: "error" });
    expect(events.map((e) => e.event).filter((e) => e === "error" || e === "result")).toEqual(["error"]);
    expect(await h.deps.db.entityInsight.count({ where: { analysisId: id } })).toBe(0);

    // A late reader replays the same end.
    const replay = await openStream(`${base}/agent/v1/analysis/${id}/events`, { token: tenant.token });
    await replay.closed;
    expectCancelledStream(replay.events);
  });

  it("answers a second cancel the same, hides the analysis from other users, and refuses a finished one", async () => {
    held.open();
    try {
      const stream = await run({ ...QUESTION, request_id: "cancel-finished" });
      const id = stream.headers.get("x-analysis-id")!;
      await stream.closed;
      expect(stream.events.at(-1)?.event).toBe("result");
      const status = (await read(id)).body.status as string;
      expect(["completed", "partial"]).toContain(status);
      expectEndedConflict(await cancel(id), status);
      expect((await read(id)).body.status).toBe(status);
    } finally {
      held.reset();
    }

    const stream = await run({ ...QUESTION, request_id: "cancel-twice" });
    const id = stream.headers.get("x-analysis-id")!;
    await stream.until((events) => events.length > 0);
    const first = await cancel(id);
    expect(first.status).toBe(200);
    await stream.closed;
    const again = await cancel(id);
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    expectCancelledStream(stream.events);

    const stranger = await h.token();
    expect((await cancel(id, stranger)).status).toBe(404);
    expect((await cancel("00000000-0000-4000-8000-000000000000")).status).toBe(404);
  });

  it("removes a queued analysis from the queue; its stream ends cancelled and it never runs", async () => {
    await workers.close();
    const stream = await run({ ...QUESTION, request_id: "cancel-queued" });
    const id = stream.headers.get("x-analysis-id")!;
    const queue = h.deps.queues.get("analysis");
    expect(await queue.getJobState(analysisJobId(id))).toBe("waiting");
    expect((await read(id)).body.status).toBe("queued");

    const startedAt = Date.now();
    const res = await cancel(id);
    expect(res.status).toBe(200);
    expect(res.body.status).toBe("cancelled");
    await stream.closed;
    expect(Date.now() - startedAt).toBeLessThan(2000);
    expectCancelledStream(stream.events);
    expect(stream.events.filter((e) => e.event === "progress")).toEqual([]);
    expect(await queue.getJob(analysisJobId(id))).toBeUndefined();

    // A worker starts and finishes a later analysis; the cancelled one stays as it was.
    held.open();
    workers = h.startWorkers(processors);
    tracker = trackEnds(workers);
    const later = await run({ ...QUESTION, request_id: "after-queued" });
    await later.closed;
    expect(later.events.at(-1)?.event).toBe("result");
    expect(tracker.ends.has(analysisJobId(id))).toBe(false);
    expect((await read(id)).body.status).toBe("cancelled");
    expect(await h.deps.db.analysisEvent.count({ where: { analysisId: id } })).toBe(1);
  });
});
