import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { notesJobId } from "../../src/intake/notes/service.js";
import { notesSyncProcessor } from "../../workers/notes-sync.js";
import type { WorkerHandles } from "../../workers/runtime.js";
import { bearer, until } from "../collection/support.js";
import { createHarness, type Harness } from "../helpers/harness.js";
import { FakeNotesProvider, makeNote } from "../notes/fake-provider.js";
import { userWithEntity } from "../notes/helpers.js";
import { expectEndedConflict, trackEnds } from "./support.js";

/**
 * Cancelling meeting-note syncs on real PostgreSQL, Redis and a BullMQ worker. The fake
 * provider answers the list of notes and holds every note's answer, so the sync sits mid-run
 * with its page half fetched; the cancel must stop it within 2 s with nothing of the page
 * stored (the page is one transaction), and a replay of the request_id answers 409.
 */
const API_KEY = `grn_${randomUUID().replaceAll("-", "")}`;
let provider: FakeNotesProvider;
let h: Harness;
let workers: WorkerHandles;
let tracker: ReturnType<typeof trackEnds>;
/** When true, note requests (not the list) wait until the test releases them. */
let holdNotes = false;

beforeAll(async () => {
  provider = new FakeNotesProvider(API_KEY);
  // The fake reads `hold` right after recording a request: hold only the notes' own requests.
  let holdAll = false;
  Object.defineProperty(provider, "hold", {
    get: () => holdAll || (holdNotes && (provider.requests.at(-1)?.path.startsWith("/v1/notes/") ?? false)),
    set: (value: boolean) => {
      holdAll = value;
    },
  });
  provider.notes.push(makeNote(1), makeNote(2), makeNote(3));
  const url = await provider.start();
  h = await createHarness({ MEETINGNOTES_API_URL: url, NOTES_SYNC_WAIT_MS: "0" });
  workers = h.startWorkers({ "notes.sync.v1": notesSyncProcessor });
  tracker = trackEnds(workers);
});
afterAll(async () => {
  await h?.close();
  await provider?.close();
});

const sync = (token: string, body: Record<string, unknown>) =>
  h.http
    .post("/api/meetingnotes/sync")
    .set(bearer(token))
    .send({ api_key: API_KEY, max_notes: 3, ...body });
const cancel = (token: string, requestId: string) => h.http.post(`/api/meetingnotes/sync/${requestId}/cancel`).set(bearer(token));
const syncRow = (requestId: string) => h.deps.db.noteSync.findFirstOrThrow({ where: { requestId } });
const stored = async (entityId: string) => ({
  content: await h.deps.db.content.count({ where: { entityId, platform: "meetingnotes" } }),
  knowledge: await h.deps.db.knowledge.count({ where: { entityId } }),
});

describe("cancelling a meeting-note sync", { timeout: 30_000 }, () => {
  it("stops a sync mid-page within 2 s, stores nothing of the page, and a replay of its request_id is a 409", async () => {
    const { token, entityId } = await userWithEntity(h);
    const requestId = `mid-${randomUUID()}`;
    holdNotes = true;
    const notesBefore = provider.count("note");
    const started = await sync(token, { entity_id: entityId, request_id: requestId });
    expect(started.status, JSON.stringify(started.body)).toBe(202);
    // The list was answered; the notes' own answers are held.
    await until(async () => provider.count("note") > notesBefore);
    const row = await syncRow(requestId);
    expect(row.status).toBe("running");

    const startedAt = Date.now();
    const res = await cancel(token, requestId);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toEqual({ status: "cancelled", request_id: requestId, entity_id: entityId, attempt: 1, retry_of: null });
    await until(async () => (await syncRow(requestId)).status === "cancelled");
    expect(Date.now() - startedAt).toBeLessThan(2000);
    const end = await tracker.endOf(notesJobId(row.userId, requestId), 5000);
    expect(end.value).toMatchObject({ status: "cancelled" });
    expect(end.at - startedAt).toBeLessThan(2000);
    const requestsAtEnd = provider.requests.length;

    // The held answers arrive late: nothing of the page is stored, and nothing more is asked.
    holdNotes = false;
    provider.release();
    expect(await stored(entityId)).toEqual({ content: 0, knowledge: 0 });
    expect(provider.requests.length).toBe(requestsAtEnd);

    const status = await h.http.get(`/api/meetingnotes/sync/${requestId}`).set(bearer(token));
    expect(status.body).toEqual({ status: "cancelled", request_id: requestId, entity_id: entityId, attempt: 1, retry_of: null });
    const replay = await sync(token, { entity_id: entityId, request_id: requestId });
    expectEndedConflict(replay, "cancelled");
    expect((await syncRow(requestId)).status).toBe("cancelled");
    // A new request_id imports the page.
    const fresh = await sync(token, { entity_id: entityId, request_id: `again-${randomUUID()}` });
    expect([200, 202]).toContain(fresh.status);
    await until(async () => (await stored(entityId)).content > 0);
  });

  it("answers a second cancel the same, hides the sync from other users, and refuses a finished one", async () => {
    const { token, entityId } = await userWithEntity(h);
    const requestId = `twice-${randomUUID()}`;
    holdNotes = true;
    try {
      const started = await sync(token, { entity_id: entityId, request_id: requestId });
      expect(started.status).toBe(202);
      const first = await cancel(token, requestId);
      expect(first.status).toBe(200);
      const again = await cancel(token, requestId);
      expect(again.status).toBe(200);
      expect(again.body).toEqual(first.body);
      const stranger = (await userWithEntity(h)).token;
      expect((await cancel(stranger, requestId)).status).toBe(404);
      expect((await cancel(token, "no-such-request")).status).toBe(404);
    } finally {
      holdNotes = false;
      provider.release();
    }

    const doneId = `done-${randomUUID()}`;
    await sync(token, { entity_id: entityId, request_id: doneId });
    await until(async () => (await syncRow(doneId)).status === "completed");
    expectEndedConflict(await cancel(token, doneId), "completed");
    expect((await syncRow(doneId)).status).toBe("completed");
  });

  it("removes a queued sync (and its sealed credential) from the queue; it never runs once a worker starts", async () => {
    const { token, entityId } = await userWithEntity(h);
    await workers.close();
    const requestId = `queued-${randomUUID()}`;
    const started = await sync(token, { entity_id: entityId, request_id: requestId });
    expect(started.status).toBe(202);
    expect(started.body.status).toBe("queued");
    const row = await syncRow(requestId);
    const queue = h.deps.queues.get("notes-sync");
    const jobId = notesJobId(row.userId, requestId);
    expect(await queue.getJobState(jobId)).toBe("waiting");

    const res = await cancel(token, requestId);
    expect(res.status).toBe(200);
    expect(res.body.status).toBe("cancelled");
    expect(await queue.getJob(jobId)).toBeUndefined();

    workers = h.startWorkers({ "notes.sync.v1": notesSyncProcessor });
    tracker = trackEnds(workers);
    const laterId = `later-${randomUUID()}`;
    await sync(token, { entity_id: entityId, request_id: laterId });
    await until(async () => (await syncRow(laterId)).status === "completed");
    expect(tracker.ends.has(jobId)).toBe(false);
    expect((await syncRow(requestId)).status).toBe("cancelled");
  });
});
