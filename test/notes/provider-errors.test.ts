import { randomUUID } from "node:crypto";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { notesSyncProcessor } from "../../workers/notes-sync.js";
import { createHarness, type Harness } from "../helpers/harness.js";
import { FakeNotesProvider, makeNote } from "./fake-provider.js";
import { eventually, userWithEntity } from "./helpers.js";

const API_KEY = `grn_${randomUUID().replaceAll("-", "")}`;
let provider: FakeNotesProvider;
let h: Harness;

beforeAll(async () => {
  provider = new FakeNotesProvider(API_KEY);
  const url = await provider.start();
  h = await createHarness({ MEETINGNOTES_API_URL: url, MEETINGNOTES_TIMEOUT_MS: "300" });
  h.startWorkers({ "notes.sync.v1": notesSyncProcessor });
  provider.notes.push(makeNote(1), makeNote(2), makeNote(3));
});
afterEach(() => {
  provider.faults.length = 0;
  provider.release();
});
afterAll(async () => {
  await h.close();
  await provider.close();
});

const sync = (token: string, body: Record<string, unknown>) =>
  h.http
    .post("/api/meetingnotes/sync")
    .set("Authorization", `Bearer ${token}`)
    .send({ api_key: API_KEY, ...body });

async function storedFor(entityId: string) {
  return {
    content: await h.deps.db.content.count({ where: { entityId } }),
    knowledge: await h.deps.db.knowledge.count({ where: { entityId } }),
  };
}

describe("meeting-note provider failures", () => {
  it("a refused api_key is a 502 provider_unauthorized naming the provider, not our own 401; a retry with a good key succeeds", async () => {
    const { token, entityId } = await userWithEntity(h);
    const requestId = `req-${randomUUID()}`;
    const res = await sync(token, { entity_id: entityId, api_key: "grn_wrong_key_123", request_id: requestId });
    expect(res.status).toBe(502);
    expect(res.body.code).toBe("provider_unauthorized");
    expect(res.body.detail).toMatch(/meetingnotes/);
    expect(res.headers["www-authenticate"]).toBeUndefined();
    expect(await storedFor(entityId)).toEqual({ content: 0, knowledge: 0 });
    const status = await h.http.get(`/api/meetingnotes/sync/${requestId}`).set("Authorization", `Bearer ${token}`);
    expect(status.body).toMatchObject({ status: "failed", error: { code: "provider_unauthorized" } });

    // A failed import may be retried under the same request_id: a new attempt (the failed one stays failed).
    const retry = await sync(token, { entity_id: entityId, request_id: requestId });
    expect(retry.status, JSON.stringify(retry.body)).toBe(200);
    expect(retry.body).toMatchObject({ imported: 3, attempt: 2, retry_of: expect.any(String) });
  });

  it("a provider 500 is retried, then answered 502 upstream_error with nothing stored", async () => {
    const { token, entityId } = await userWithEntity(h);
    provider.faults.push({ route: "list", status: 500 });
    const before = provider.count("list");
    const res = await sync(token, { entity_id: entityId });
    expect(res.status).toBe(502);
    expect(res.body.code).toBe("upstream_error");
    expect(provider.count("list") - before).toBe(3);
    expect(await storedFor(entityId)).toEqual({ content: 0, knowledge: 0 });
  });

  it("a provider 503 answers 503 upstream_unavailable with Retry-After", async () => {
    const { token, entityId } = await userWithEntity(h);
    provider.faults.push({ route: "list", status: 503 });
    const res = await sync(token, { entity_id: entityId });
    expect(res.status).toBe(503);
    expect(res.body.code).toBe("upstream_unavailable");
    expect(res.headers["retry-after"]).toBeDefined();
  });

  it("a timeout answers 503 upstream_unavailable", async () => {
    const { token, entityId } = await userWithEntity(h);
    provider.hold = true;
    const res = await sync(token, { entity_id: entityId });
    expect(res.status).toBe(503);
    expect(res.body).toMatchObject({ code: "upstream_unavailable", detail: expect.stringMatching(/did not answer/) });
    expect(await storedFor(entityId)).toEqual({ content: 0, knowledge: 0 });
  });

  it("a 429 is retried after Retry-After and then succeeds", async () => {
    const { token, entityId } = await userWithEntity(h);
    provider.faults.push({ route: "list", status: 429, headers: { "Retry-After": "0" }, times: 1 });
    const before = provider.count("list");
    const res = await sync(token, { entity_id: entityId });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.imported).toBe(3);
    expect(provider.count("list") - before).toBe(2);
  });

  it("a malformed list answer is a 502 upstream_error", async () => {
    const { token, entityId } = await userWithEntity(h);
    provider.faults.push({ route: "list", status: 200, body: JSON.stringify({ items: [], more: false }) });
    const res = await sync(token, { entity_id: entityId });
    expect(res.status).toBe(502);
    expect(res.body.code).toBe("upstream_error");
    provider.faults.length = 0;
    provider.faults.push({ route: "list", status: 200, body: "<html>not json</html>" });
    const html = await sync(token, { entity_id: entityId });
    expect(html.status).toBe(502);
    expect(html.body.code).toBe("upstream_error");
  });

  it("a malformed LAST note leaves nothing half-imported", async () => {
    const { token, entityId } = await userWithEntity(h);
    const last = [...provider.notes].sort((a, b) => a.created_at.localeCompare(b.created_at))[0];
    provider.faults.push({
      route: "note",
      noteId: last?.id,
      status: 200,
      body: JSON.stringify({ ...last, transcript: [{ speaker: "nobody", text: 42 }] }),
    });
    const res = await sync(token, { entity_id: entityId, max_notes: 3 });
    expect(res.status).toBe(502);
    expect(res.body.code).toBe("upstream_error");
    expect(await storedFor(entityId)).toEqual({ content: 0, knowledge: 0 });
  });

  it("a 404 for a listed note is a 502 and stores nothing", async () => {
    const { token, entityId } = await userWithEntity(h);
    provider.faults.push({ route: "note", noteId: provider.notes[1]?.id, status: 404 });
    const res = await sync(token, { entity_id: entityId });
    expect(res.status).toBe(502);
    expect(await storedFor(entityId)).toEqual({ content: 0, knowledge: 0 });
  });
});

describe("a slow import answers 202 with a next link", () => {
  let slow: Harness;
  beforeAll(async () => {
    slow = await createHarness({ MEETINGNOTES_API_URL: provider.url, NOTES_SYNC_WAIT_MS: "200", MEETINGNOTES_TIMEOUT_MS: "10000" });
    slow.startWorkers({ "notes.sync.v1": notesSyncProcessor });
  });
  afterAll(() => slow.close());

  it("answers 202 while the provider is slow, then the status route answers the page", async () => {
    const token = await slow.token();
    const onboarded = await slow.http
      .post("/api/entities/onboarding")
      .set("Authorization", `Bearer ${token}`)
      .send({ company: { name: "Slow" } });
    const entityId = onboarded.body.company.id;
    provider.hold = true;
    const res = await slow.http
      .post("/api/meetingnotes/sync")
      .set("Authorization", `Bearer ${token}`)
      .send({ api_key: API_KEY, entity_id: entityId, request_id: "slow-request-1" });
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ request_id: "slow-request-1", next: "/api/meetingnotes/sync/slow-request-1" });
    expect(["queued", "running"]).toContain(res.body.status);
    expect(res.headers.location).toBe("/api/meetingnotes/sync/slow-request-1");

    provider.release();
    const done = await eventually(async () => {
      const s = await slow.http.get(res.body.next).set("Authorization", `Bearer ${token}`);
      return s.body.status === "completed" ? s.body : undefined;
    });
    expect(done.imported).toBe(3);
  });

  it("refuses with 503 when SECRETS_KEY is not configured", async () => {
    const bare = await createHarness({ MEETINGNOTES_API_URL: provider.url, SECRETS_KEY: "" });
    try {
      const token = await bare.token();
      const onboarded = await bare.http
        .post("/api/entities/onboarding")
        .set("Authorization", `Bearer ${token}`)
        .send({ company: { name: "X" } });
      const res = await bare.http
        .post("/api/meetingnotes/sync")
        .set("Authorization", `Bearer ${token}`)
        .send({ api_key: API_KEY, entity_id: onboarded.body.company.id });
      expect(res.status).toBe(503);
      expect(res.body).toMatchObject({ code: "service_unavailable", detail: expect.stringMatching(/SECRETS_KEY/) });
      expect(await bare.deps.db.noteSync.count()).toBe(0);
    } finally {
      await bare.close();
    }
  });
});

describe("a database failure while storing a page", () => {
  it("leaves neither the transcript rows nor the summaries behind", async () => {
    const { token, entityId } = await userWithEntity(h);
    const poisoned = makeNote(9, { summary: "REJECT-ME: a summary the database refuses" });
    provider.notes.push(poisoned);
    await h.deps.db.$executeRawUnsafe(
      `ALTER TABLE knowledge ADD CONSTRAINT knowledge_reject_marker CHECK (content NOT LIKE '%REJECT-ME%') NOT VALID`,
    );
    try {
      const res = await sync(token, { entity_id: entityId, max_notes: 20 });
      expect(res.status).toBeGreaterThanOrEqual(500);
      // Every note of the page was fetched and the rows were written before the summary failed:
      // the one transaction rolled all of it back.
      expect(await storedFor(entityId)).toEqual({ content: 0, knowledge: 0 });
    } finally {
      await h.deps.db.$executeRawUnsafe("ALTER TABLE knowledge DROP CONSTRAINT knowledge_reject_marker");
      provider.notes.splice(provider.notes.indexOf(poisoned), 1);
    }
    const retry = await sync(token, { entity_id: entityId, max_notes: 20 });
    expect(retry.status, JSON.stringify(retry.body)).toBe(200);
    expect(retry.body.imported).toBe(provider.notes.length);
  });
});
