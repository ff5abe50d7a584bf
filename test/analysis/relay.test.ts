import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { analysisChannel, appendEvent } from "../../src/insights/analysis/events.js";
import { createHarness, type Harness } from "../helpers/harness.js";
import { subscriberCounts } from "../support/redis-cluster.js";
import { createTenant, type Tenant, waitFor } from "./fixtures.js";
import { listen, openStream } from "./sse-client.js";

/**
 * The relay on its own: events are appended here exactly as the analysis worker appends
 * them (store, then publish), while clients read the events route.
 */
let h: Harness;
let base: string;
let closeServer: () => Promise<void>;
let tenant: Tenant;

beforeAll(async () => {
  h = await createHarness({ SSE_HEARTBEAT_MS: "50" });
  ({ baseUrl: base, close: closeServer } = await listen(h));
  tenant = await createTenant(h);
});
afterAll(async () => {
  await closeServer();
  await h.close();
});

async function runningAnalysis(): Promise<string> {
  const row = await h.deps.db.analysis.create({ data: { userId: tenant.userId, question: "relay test", status: "running" } });
  return row.id;
}

const progress = (id: string, n: number) =>
  appendEvent(h.deps, id, "progress", { step: `step-${n}`, status: "running", progress: n / 100 });
const events = (id: string, lastEventId?: string) =>
  openStream(`${base}/agent/v1/analysis/${id}/events`, {
    token: tenant.token,
    ...(lastEventId ? { headers: { "Last-Event-ID": lastEventId } } : {}),
  });

describe("analysis event relay", () => {
  it("replays stored events, then continues live without gaps or duplicates, and ends after the result", async () => {
    const id = await runningAnalysis();
    for (let n = 1; n <= 3; n++) await progress(id, n);

    const stream = await events(id, "1");
    await stream.until((ev) => ev.length >= 2);
    expect(stream.events.map((e) => e.id)).toEqual([2, 3]);

    // Appends racing with the replay and with each other.
    await Promise.all(Array.from({ length: 40 }, (_, i) => progress(id, 4 + i)));
    await appendEvent(h.deps, id, "result", { status: "completed", data: { answer: "done" } });
    await stream.closed;
    expect(stream.events.map((e) => e.id)).toEqual(Array.from({ length: 43 }, (_, i) => i + 2));
    expect(stream.events.at(-1)).toMatchObject({ event: "result", data: { analysis_id: id, status: "completed" } });
    await waitFor(async () => (h.deps.pubsub.channelCount === 0 ? true : undefined), 5000, "unsubscribe after the result");
  });

  it("a client that joins while events are being appended sees each event once, in order", async () => {
    const id = await runningAnalysis();
    const writer = (async () => {
      for (let n = 1; n <= 60; n++) await progress(id, n);
      await appendEvent(h.deps, id, "result", { status: "partial", data: {} });
    })();
    const stream = await events(id);
    await writer;
    await stream.closed;
    expect(stream.events.map((e) => e.id)).toEqual(Array.from({ length: 61 }, (_, i) => i + 1));
  });

  it("sends ': ping' heartbeats while idle, and drops the subscription when the client leaves", async () => {
    const id = await runningAnalysis();
    const before = h.deps.pubsub.channelCount;
    const stream = await events(id);
    await stream.until((_, comments) => comments.filter((c) => c === "ping").length >= 2, 5000);
    expect(h.deps.pubsub.channelCount).toBe(before + 1);
    stream.abort();
    await stream.closed;
    await waitFor(async () => (h.deps.pubsub.channelCount === before ? true : undefined), 5000, "unsubscribe after disconnect");
  });

  it("an event stored but never published still reaches the client (read from the store on the heartbeat)", async () => {
    const id = await runningAnalysis();
    const stream = await events(id);
    await stream.until((_, comments) => comments.includes("ping"), 5000);
    // Stored exactly as appendEvent stores it, but with no publish at all.
    await h.deps.db.analysisEvent.create({
      data: { analysisId: id, seq: 1, event: "result", data: { analysis_id: id, status: "completed", data: {} } },
    });
    await stream.closed;
    expect(stream.events).toEqual([{ id: 1, event: "result", data: { analysis_id: id, status: "completed", data: {} } }]);
  });

  it("many streams share one subscriber connection", async () => {
    const ids = await Promise.all(Array.from({ length: 5 }, () => runningAnalysis()));
    const before = h.deps.pubsub.channelCount;
    const clients = await Promise.all(ids.flatMap((id) => [events(id), events(id)]));
    expect(h.deps.pubsub.channelCount).toBe(before + 5);
    // Two clients per analysis, yet Redis sees one subscriber per channel: the shared connection.
    const channels = ids.map((id) => analysisChannel(h.config.REDIS_PREFIX, id));
    expect(await subscriberCounts(h.deps.redis, channels)).toEqual([1, 1, 1, 1, 1]);
    await Promise.all(ids.map((id) => appendEvent(h.deps, id, "result", { status: "completed", data: {} })));
    await Promise.all(clients.map((c) => c.closed));
    for (const c of clients) expect(c.events.map((e) => e.event)).toEqual(["result"]);
  });

  it("a finished analysis replays and closes at once", async () => {
    const id = await runningAnalysis();
    await progress(id, 1);
    await appendEvent(h.deps, id, "error", { status: "failed", detail: "boom" }, async (tx) => {
      await tx.analysis.update({ where: { id }, data: { status: "failed", error: "boom" } });
    });
    const stream = await events(id);
    await stream.closed;
    expect(stream.events.map((e) => e.event)).toEqual(["progress", "error"]);
    expect(stream.events[1]?.data).toEqual({ analysis_id: id, status: "failed", detail: "boom" });
    const row = await h.http.get(`/agent/v1/analysis/${id}`).set("Authorization", `Bearer ${tenant.token}`);
    expect(row.body).toMatchObject({ status: "failed", error: "boom", result: null });
  });
});
