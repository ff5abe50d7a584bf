import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import supertest from "supertest";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../../src/app.js";
import { createDb } from "../../src/platform/db.js";
import { notesSyncProcessor } from "../../workers/notes-sync.js";
import { createHarness, type Harness } from "../helpers/harness.js";
import { FakeNotesProvider, makeNote } from "../notes/fake-provider.js";
import { userWithEntity } from "../notes/helpers.js";

/**
 * Every 503 and 429 the API sends carries a Retry-After: the provider's own value when
 * the answer is about a provider that gave one, a default otherwise.
 */

/** One local server standing in for an embeddings endpoint and a SearXNG instance; each answer is programmed. */
interface Programmed {
  status: number;
  headers?: Record<string, string>;
  hang?: boolean;
}
const answers: Record<"/embeddings" | "/search", Programmed> = {
  "/embeddings": { status: 500 },
  "/search": { status: 503 },
};
let upstream: Server;
let upstreamUrl: string;

function handle(req: IncomingMessage, res: ServerResponse) {
  req.resume();
  const path = new URL(req.url ?? "/", "http://localhost").pathname as keyof typeof answers;
  const answer = answers[path];
  if (!answer) {
    res.writeHead(404).end();
    return;
  }
  if (answer.hang) return;
  res.writeHead(answer.status, { "content-type": "application/json", ...(answer.headers ?? {}) });
  res.end(JSON.stringify({ error: { message: "programmed failure" } }));
}

const NOTES_KEY = `grn_${randomUUID().replaceAll("-", "")}`;
let notes: FakeNotesProvider;
let h: Harness;

beforeAll(async () => {
  upstream = createServer(handle);
  await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve));
  upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
  notes = new FakeNotesProvider(NOTES_KEY);
  const notesUrl = await notes.start();
  notes.notes.push(makeNote(1));
  h = await createHarness({
    MEETINGNOTES_API_URL: notesUrl,
    MEETINGNOTES_TIMEOUT_MS: "300",
    NOTES_SYNC_WAIT_MS: "20000",
    EMBEDDINGS_URL: upstreamUrl,
    EMBEDDINGS_TIMEOUT_MS: "300",
    SEARXNG_URL: upstreamUrl,
    SEARCH_PROVIDER_TIMEOUT_MS: "300",
  });
  h.startWorkers({ "notes.sync.v1": notesSyncProcessor });
});
afterEach(() => {
  notes.faults.length = 0;
  notes.release();
});
afterAll(async () => {
  await h.close();
  await notes.close();
  upstream.closeAllConnections();
  await new Promise<void>((resolve) => upstream.close(() => resolve()));
});

const bearer = async () => ({ Authorization: `Bearer ${await h.token()}` });

describe("meeting-note import", () => {
  const sync = async (token: string, entityId: string) =>
    h.http.post("/api/meetingnotes/sync").set("Authorization", `Bearer ${token}`).send({ api_key: NOTES_KEY, entity_id: entityId });

  it("passes the provider's Retry-After of a 429 on (1 s), not a value of its own", async () => {
    const { token, entityId } = await userWithEntity(h);
    notes.faults.push({ route: "list", status: 429, headers: { "Retry-After": "1" } });
    const res = await sync(token, entityId);
    expect(res.status, JSON.stringify(res.body)).toBe(503);
    expect(res.body.code).toBe("upstream_unavailable");
    expect(res.headers["retry-after"]).toBe("1");
  });

  it("passes the provider's Retry-After of a 503 on", async () => {
    const { token, entityId } = await userWithEntity(h);
    notes.faults.push({ route: "list", status: 503, headers: { "Retry-After": "45" } });
    const res = await sync(token, entityId);
    expect(res.status).toBe(503);
    expect(res.headers["retry-after"]).toBe("45");
  });

  it("answers a default Retry-After when the provider gave none (timeout)", async () => {
    const { token, entityId } = await userWithEntity(h);
    notes.hold = true;
    const res = await sync(token, entityId);
    expect(res.status).toBe(503);
    expect(res.headers["retry-after"]).toBe("30");
  });
});

describe("embeddings", () => {
  const embed = async () =>
    h.http
      .post("/agent/v1/content/embed")
      .set(await bearer())
      .send({ text: "how long should I wait?" });

  it("passes the provider's Retry-After of a 429 or 503 on", async () => {
    answers["/embeddings"] = { status: 429, headers: { "Retry-After": "7" } };
    const limited = await embed();
    expect(limited.status).toBe(503);
    expect(limited.headers["retry-after"]).toBe("7");
    answers["/embeddings"] = { status: 503, headers: { "Retry-After": new Date(Date.now() + 20_000).toUTCString() } };
    const down = await embed();
    expect(down.status).toBe(503);
    expect(Number(down.headers["retry-after"])).toBeGreaterThanOrEqual(18);
    expect(Number(down.headers["retry-after"])).toBeLessThanOrEqual(21);
  });

  it("answers a default Retry-After for a 5xx without one and for a timeout", async () => {
    answers["/embeddings"] = { status: 500 };
    const failed = await embed();
    expect(failed.status).toBe(503);
    expect(failed.headers["retry-after"]).toBe("30");
    answers["/embeddings"] = { status: 200, hang: true };
    const timedOut = await embed();
    expect(timedOut.status).toBe(503);
    expect(timedOut.headers["retry-after"]).toBe("30");
  });
});

describe("context recall", () => {
  it("a recall that only the unavailable embeddings provider could answer is a 503 with Retry-After", async () => {
    answers["/embeddings"] = { status: 429, headers: { "Retry-After": "11" } };
    const res = await h.http
      .get("/agent/v1/context/recall")
      .query({ query: "nothing saved yet" })
      .set(await bearer());
    expect(res.status).toBe(503);
    expect(res.headers["retry-after"]).toBe("11");
    answers["/embeddings"] = { status: 502 };
    const unnamed = await h.http
      .get("/agent/v1/context/recall")
      .query({ query: "nothing saved yet" })
      .set(await bearer());
    expect(unnamed.status).toBe(503);
    expect(unnamed.headers["retry-after"]).toBe("30");
  });
});

describe("search", () => {
  const search = async () =>
    h.http
      .post("/agent/v1/search")
      .set(await bearer())
      .send({ query: "retry" });

  it("passes the search provider's Retry-After on, and answers a default without one", async () => {
    answers["/search"] = { status: 503, headers: { "Retry-After": "9" } };
    const down = await search();
    expect(down.status).toBe(503);
    expect(down.headers["retry-after"]).toBe("9");
    answers["/search"] = { status: 429 };
    const limited = await search();
    expect(limited.status).toBe(503);
    expect(limited.headers["retry-after"]).toBe("30");
  });
});

describe("our own dependencies", () => {
  it("health answering 503 carries Retry-After", async () => {
    const down = createDb("postgresql://postgres@127.0.0.1:1/none");
    try {
      const res = await supertest(createApp({ ...h.deps, db: down })).get("/agent/v1/health");
      expect(res.status).toBe(503);
      expect(res.headers["retry-after"]).toBe("5");
    } finally {
      await down.$disconnect();
    }
  });

  it("meeting-note import without SECRETS_KEY is a 503 with Retry-After", async () => {
    const unconfigured = await createHarness({ SECRETS_KEY: "" });
    try {
      const token = await unconfigured.token();
      const res = await unconfigured.http
        .post("/api/meetingnotes/sync")
        .set("Authorization", `Bearer ${token}`)
        .send({ api_key: NOTES_KEY, entity_id: randomUUID() });
      expect(res.status).toBe(503);
      expect(res.body.code).toBe("service_unavailable");
      expect(res.headers["retry-after"]).toBe("5");
    } finally {
      await unconfigured.close();
    }
  });
});
