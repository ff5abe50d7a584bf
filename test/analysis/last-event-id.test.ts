import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { appendEvent } from "../../src/insights/analysis/events.js";
import { createHarness, type Harness } from "../helpers/harness.js";
import { createTenant, type Tenant } from "./fixtures.js";
import { listen, openStream } from "./sse-client.js";

/**
 * A Last-Event-ID beyond any event id (more digits than a sequence number has, or past
 * the 32-bit range the store keeps) resumes after the end: nothing is replayed, and the
 * stream ends with the analysis. It never starts the replay again from the first event.
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

const TOO_LARGE = ["1000000000", "2147483647", "2147483648", "99999999999", "9".repeat(60)];

async function analysisWithEvents(status: "running" | "completed", events: number): Promise<string> {
  const row = await h.deps.db.analysis.create({ data: { userId: tenant.userId, question: "resume test", status: "running" } });
  for (let n = 1; n <= events; n++)
    await appendEvent(h.deps, row.id, "progress", { step: `step-${n}`, status: "running", progress: n / 10 });
  if (status === "completed") {
    await appendEvent(h.deps, row.id, "result", { status: "completed", data: {} });
    await h.deps.db.analysis.update({ where: { id: row.id }, data: { status: "completed", finishedAt: new Date() } });
  }
  return row.id;
}

const url = (id: string, query = "") => `${base}/agent/v1/analysis/${id}/events${query}`;

describe("Last-Event-ID beyond any event id", () => {
  it("in the header, replays nothing of a finished analysis and ends the stream", async () => {
    const id = await analysisWithEvents("completed", 3);
    for (const lastEventId of TOO_LARGE) {
      const stream = await openStream(url(id), { token: tenant.token, headers: { "Last-Event-ID": lastEventId } });
      expect(stream.status).toBe(200);
      await stream.closed;
      expect(stream.events, lastEventId).toEqual([]);
    }
  });

  it("in the query, replays nothing either", async () => {
    const id = await analysisWithEvents("completed", 3);
    for (const lastEventId of TOO_LARGE) {
      const stream = await openStream(url(id, `?last_event_id=${lastEventId}`), { token: tenant.token });
      expect(stream.status).toBe(200);
      await stream.closed;
      expect(stream.events, lastEventId).toEqual([]);
    }
  });

  it("on a running analysis, sends nothing and ends when the analysis does", async () => {
    const id = await analysisWithEvents("running", 2);
    const stream = await openStream(url(id), { token: tenant.token, headers: { "Last-Event-ID": "99999999999" } });
    await stream.until((_, comments) => comments.includes("ping"), 5000);
    await appendEvent(h.deps, id, "progress", { step: "more", status: "running", progress: 0.5 });
    await appendEvent(h.deps, id, "result", { status: "completed", data: {} });
    await stream.closed;
    expect(stream.events).toEqual([]);
  });

  it("while ids within the range still resume right after them", async () => {
    const id = await analysisWithEvents("completed", 3);
    const stream = await openStream(url(id), { token: tenant.token, headers: { "Last-Event-ID": "2" } });
    await stream.closed;
    expect(stream.events.map((e) => e.id)).toEqual([3, 4]);
    const fromStart = await openStream(url(id), { token: tenant.token, headers: { "Last-Event-ID": "not-a-number" } });
    await fromStart.closed;
    expect(fromStart.events.map((e) => e.id)).toEqual([1, 2, 3, 4]);
  });
});
