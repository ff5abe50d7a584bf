import { connect, type Server, type Socket } from "node:net";
import express from "express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openSse, SSE_MAX_BUFFERED_BYTES, type SseStream } from "../../src/platform/sse.js";
import { createHarness, type Harness } from "../helpers/harness.js";
import { type Listening, listen } from "./support/http.js";
import { until } from "./support/processes.js";
import { buildWorld, type World } from "./support/world.js";

/**
 * A client that stops reading an event stream must not make the server buffer without
 * bound. The analysis events route replays 20 MB of stored events to a client that
 * never reads: the bytes waiting in the server process stay under the limit (one event
 * over it at most), the server drops the connection and its Redis subscription, and a
 * client that does read gets every event by resuming with Last-Event-ID. The stream
 * primitive also drops a client whose backlog does not drain for a heartbeat interval,
 * and releases an ended stream whose last bytes are never read.
 */
const EVENT_BYTES = 40_000;
const EVENTS = 500;

let h: Harness;
let web: Listening;
let world: World;
const serverSockets: Socket[] = [];

beforeAll(async () => {
  h = await createHarness({ SSE_HEARTBEAT_MS: "200" });
  web = await listen(h.app);
  web.server.on("connection", (socket: Socket) => serverSockets.push(socket));
  world = await buildWorld(h);
});
afterAll(async () => {
  await web?.close();
  await h?.close();
});

/** An analysis with 20 MB of stored events, ending with its result. */
async function bigAnalysis(): Promise<string> {
  const analysis = await h.deps.db.analysis.create({
    data: { userId: world.userId, workspaceId: world.workspaceId, entityId: world.entityId, question: "Big stream?", status: "completed" },
  });
  const filler = "x".repeat(EVENT_BYTES);
  await h.deps.db.analysisEvent.createMany({
    data: Array.from({ length: EVENTS }, (_, i) => ({
      analysisId: analysis.id,
      seq: i + 1,
      event: i === EVENTS - 1 ? "result" : "progress",
      data:
        i === EVENTS - 1
          ? { analysis_id: analysis.id, status: "completed", data: {} }
          : { analysis_id: analysis.id, step: `step ${i}`, status: "running", progress: i / EVENTS, filler },
    })),
  });
  return analysis.id;
}

/** Opens the events stream on a raw socket that never reads a byte. */
async function stalledClient(analysisId: string): Promise<{ client: Socket; server: Socket }> {
  const before = serverSockets.length;
  const client = connect({ port: web.port, host: "127.0.0.1" });
  await new Promise<void>((resolve) => client.once("connect", () => resolve()));
  client.pause();
  client.write(
    `GET /agent/v1/analysis/${analysisId}/events HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${world.token}\r\nAccept: text/event-stream\r\n\r\n`,
  );
  const server = await until("the server side of the connection", async () => serverSockets[before]);
  return { client, server };
}

describe("a stalled event-stream client", () => {
  it("is dropped before the server buffers more than the limit, and its subscription is released", async () => {
    const analysisId = await bigAnalysis();
    const channelsBefore = h.deps.pubsub.channelCount;
    const { client, server } = await stalledClient(analysisId);
    let peak = 0;
    await until(
      "the server dropping the stalled client",
      async () => {
        peak = Math.max(peak, server.writableLength);
        return server.destroyed;
      },
      15_000,
      5,
    );
    // What waited in the process never passed the limit by more than one event (with its framing).
    expect(peak).toBeLessThanOrEqual(SSE_MAX_BUFFERED_BYTES + EVENT_BYTES + 1024);
    await until("the relay's subscription released", async () => h.deps.pubsub.channelCount === channelsBefore);
    client.destroy();
  });

  it("streams a long replay at a reading client's pace: every event once, in order, in one connection", async () => {
    const analysisId = await bigAnalysis();
    const seen: number[] = [];
    let done = false;
    let attempts = 0;
    for (; attempts < 60 && !done; attempts++) {
      const res = await fetch(`${web.url}/agent/v1/analysis/${analysisId}/events`, {
        headers: { Authorization: `Bearer ${world.token}`, ...(seen.length ? { "Last-Event-ID": String(seen.at(-1)) } : {}) },
      });
      expect(res.status).toBe(200);
      // Read what arrives until the stream ends or is dropped.
      let text = "";
      const reader = (res.body as ReadableStream<Uint8Array>).getReader();
      const decoder = new TextDecoder();
      for (;;) {
        const chunk = await reader.read().catch(() => ({ done: true, value: undefined }));
        if (chunk.value) text += decoder.decode(chunk.value, { stream: true });
        if (chunk.done) break;
      }
      for (const block of text.split("\n\n")) {
        const id = /^id: (\d+)$/m.exec(block)?.[1];
        const event = /^event: (\w+)$/m.exec(block)?.[1];
        const data = /^data: (.*)$/m.exec(block)?.[1];
        // A block cut off by the drop is incomplete: resume from the last whole event.
        if (!id || !event || !data) continue;
        try {
          JSON.parse(data);
        } catch {
          continue;
        }
        seen.push(Number(id));
        if (event === "result") done = true;
      }
    }
    expect(done).toBe(true);
    expect(seen).toEqual(Array.from({ length: EVENTS }, (_, i) => i + 1));
    expect(attempts).toBe(1);
  }, 60_000);
});

describe("the event-stream primitive", () => {
  let server: Server;
  let port: number;
  const streams: SseStream[] = [];
  const sockets: Socket[] = [];

  beforeAll(async () => {
    const app = express();
    // Fills the connection until the kernel's buffers are full and 256 KB wait in the process
    // (under the byte limit), then writes nothing more; `end=1` then ends the stream.
    app.get("/fill", (req, res) => {
      const stream = openSse(res, { heartbeatMs: 100, maxBufferedBytes: 64 * 1024 * 1024 });
      streams.push(stream);
      const chunk = "y".repeat(16 * 1024);
      let id = 0;
      // One event per turn of the event loop: the kernel takes what it can between turns.
      const pump = () => {
        if (stream.closed) return;
        stream.send(++id, "fill", { chunk });
        if (res.writableLength < 256 * 1024) setImmediate(pump);
        else if (req.query.end === "1") stream.end();
      };
      pump();
    });
    // Writes 4 MB at once (a burst of live events) against a 512 KB limit.
    app.get("/burst", (_req, res) => {
      const stream = openSse(res, { heartbeatMs: 60_000, maxBufferedBytes: 512 * 1024 });
      streams.push(stream);
      const chunk = "z".repeat(64 * 1024);
      for (let id = 1; id <= 64 && !stream.closed; id++) stream.send(id, "burst", { chunk });
    });
    server = app.listen(0, "127.0.0.1");
    server.on("connection", (s: Socket) => sockets.push(s));
    await new Promise<void>((resolve) => server.once("listening", () => resolve()));
    port = (server.address() as { port: number }).port;
  });
  afterAll(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  async function stall(path: string) {
    const before = sockets.length;
    const client = connect({ port, host: "127.0.0.1" });
    await new Promise<void>((resolve) => client.once("connect", () => resolve()));
    client.pause();
    client.write(`GET ${path} HTTP/1.1\r\nHost: localhost\r\n\r\n`);
    const serverSide = await until("the server side", async () => sockets[before]);
    await until("a backlog in the process", async () => serverSide.writableLength >= 200 * 1024 || serverSide.destroyed, 10_000, 5);
    return { client, serverSide };
  }

  it("drops a client whose backlog does not drain for a heartbeat interval", async () => {
    const { client, serverSide } = await stall("/fill");
    const stream = streams.at(-1) as SseStream;
    const started = Date.now();
    await until("the stalled stream closed", async () => stream.closed && serverSide.destroyed, 5_000, 10);
    // Nothing more is written, so the byte limit never trips: the heartbeat found the stall (1–2 intervals).
    expect(Date.now() - started).toBeLessThan(5_000);
    client.destroy();
  });

  it("drops a client at once when a burst would leave more than the limit waiting in the process", async () => {
    const before = sockets.length;
    const client = connect({ port, host: "127.0.0.1" });
    await new Promise<void>((resolve) => client.once("connect", () => resolve()));
    client.pause();
    client.write("GET /burst HTTP/1.1\r\nHost: localhost\r\n\r\n");
    const serverSide = await until("the server side", async () => sockets[before]);
    await until("the burst's stream dropped", async () => serverSide.destroyed, 5_000, 10);
    const stream = streams.at(-1) as SseStream;
    expect(stream.closed).toBe(true);
    client.destroy();
  });

  it("releases an ended stream whose last bytes are never read", async () => {
    const { client, serverSide } = await stall("/fill?end=1");
    const stream = streams.at(-1) as SseStream;
    await until("the stream ended", async () => stream.closed);
    await until("the unread socket destroyed", async () => serverSide.destroyed, 5_000, 10);
    client.destroy();
  });
});
