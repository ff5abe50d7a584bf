import { randomUUID } from "node:crypto";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { notesJobId } from "../../src/intake/notes/service.js";
import { notesSyncProcessor } from "../../workers/notes-sync.js";
import { createHarness, type Harness } from "../helpers/harness.js";
import { FakeNotesProvider, makeNote } from "./fake-provider.js";
import { eventually, userWithEntity } from "./helpers.js";

/**
 * Terminal states are final: a failed meeting-note sync stays failed. The same request_id retries
 * it as a new attempt (attempt 2, retry_of the failed sync), which the request_id then names
 * everywhere: the status read, a replay, a cancel.
 */
const API_KEY = `grn_${randomUUID().replaceAll("-", "")}`;
let provider: FakeNotesProvider;
let h: Harness;

beforeAll(async () => {
  provider = new FakeNotesProvider(API_KEY);
  const url = await provider.start();
  provider.notes.push(makeNote(900), makeNote(901));
  h = await createHarness({ MEETINGNOTES_API_URL: url, NOTES_SYNC_WAIT_MS: "3000" });
  h.startWorkers({ "notes.sync.v1": notesSyncProcessor });
});
afterEach(() => {
  provider.faults.length = 0;
  provider.release();
});
afterAll(async () => {
  await h?.close();
  await provider?.close();
});

// Only the two notes of this file (the provider's notes of 2026-01-900 days on).
const PAGE = { created_after: "2028-06-01T00:00:00Z" };

const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });
const sync = (token: string, body: Record<string, unknown>) =>
  h.http
    .post("/api/meetingnotes/sync")
    .set(bearer(token))
    .send({ api_key: API_KEY, ...PAGE, ...body });
const status = (token: string, requestId: string) => h.http.get(`/api/meetingnotes/sync/${requestId}`).set(bearer(token));
const attempts = (requestId: string) => h.deps.db.noteSync.findMany({ where: { requestId }, orderBy: { attempt: "asc" } });

/** A sync that failed for good: the provider refused its key. */
async function failedSync() {
  const { token, entityId } = await userWithEntity(h);
  const requestId = `retry-${randomUUID()}`;
  const refused = await sync(token, { entity_id: entityId, request_id: requestId, api_key: "grn_wrong_key_123" });
  expect(refused.status, JSON.stringify(refused.body)).toBe(502);
  const [failed, ...more] = await attempts(requestId);
  expect(more).toEqual([]);
  expect(failed).toMatchObject({ status: "failed", attempt: 1, retryOf: null, errorCode: "provider_unauthorized" });
  expect(failed?.finishedAt).toBeInstanceOf(Date);
  return { token, entityId, requestId, failed: failed as NonNullable<typeof failed> };
}

describe("retrying a failed meeting-note sync", () => {
  it("is a new attempt: the failed sync stays failed, and the request_id answers the new one", async () => {
    const { token, entityId, requestId, failed } = await failedSync();
    expect((await status(token, requestId)).body).toMatchObject({ status: "failed", attempt: 1, retry_of: null });

    const retry = await sync(token, { entity_id: entityId, request_id: requestId });
    expect(retry.status, JSON.stringify(retry.body)).toBe(200);
    expect(retry.body).toMatchObject({ status: "completed", request_id: requestId, imported: 2, attempt: 2, retry_of: failed.id });

    const [first, second, ...more] = await attempts(requestId);
    expect(more).toEqual([]);
    // The failed sync is exactly as it ended: status, error, finished_at, everything.
    expect(first).toEqual(failed);
    expect(second).toMatchObject({ status: "completed", attempt: 2, retryOf: failed.id, error: null });
    expect(second?.id).not.toBe(failed.id);

    // The request_id names the newest attempt: the status read, a replay (nothing imported again), a cancel.
    expect((await status(token, requestId)).body).toEqual(retry.body);
    const calls = provider.count("list");
    const replay = await sync(token, { entity_id: entityId, request_id: requestId });
    expect(replay.status).toBe(200);
    expect(replay.body).toEqual(retry.body);
    expect(provider.count("list")).toBe(calls);
    const cancel = await h.http.post(`/api/meetingnotes/sync/${requestId}/cancel`).set(bearer(token));
    expect(cancel.status).toBe(409);
    expect(cancel.body).toMatchObject({ code: "conflict", status: "completed" });
    expect(await attempts(requestId)).toHaveLength(2);
    expect((await attempts(requestId))[0]).toEqual(failed);
  });

  it("two concurrent retries make one new attempt and import the page once", async () => {
    const { token, entityId, requestId, failed } = await failedSync();
    const before = provider.count("list");
    const answers = await Promise.all([1, 2, 3].map(() => sync(token, { entity_id: entityId, request_id: requestId })));
    for (const a of answers) expect(a.status, JSON.stringify(a.body)).toBe(200);
    expect(answers[1]?.body).toEqual(answers[0]?.body);
    expect(answers[2]?.body).toEqual(answers[0]?.body);
    expect(answers[0]?.body).toMatchObject({ attempt: 2, retry_of: failed.id });
    expect(provider.count("list") - before).toBe(1);
    const rows = await attempts(requestId);
    expect(rows.map((r) => [r.attempt, r.status])).toEqual([
      [1, "failed"],
      [2, "completed"],
    ]);
    expect(rows[0]).toEqual(failed);
  });

  it("a retry that fails again is attempt 2, and the next retry attempt 3; each failed attempt stays failed", async () => {
    const { token, entityId, requestId, failed } = await failedSync();
    provider.faults.push({ route: "list", status: 401, times: 1 });
    const again = await sync(token, { entity_id: entityId, request_id: requestId });
    expect(again.status).toBe(502);
    const [, second] = await attempts(requestId);
    expect(second).toMatchObject({ status: "failed", attempt: 2, retryOf: failed.id });
    expect((await status(token, requestId)).body).toMatchObject({ status: "failed", attempt: 2, retry_of: failed.id });

    const third = await sync(token, { entity_id: entityId, request_id: requestId });
    expect(third.status, JSON.stringify(third.body)).toBe(200);
    expect(third.body).toMatchObject({ attempt: 3, retry_of: second?.id });
    const rows = await attempts(requestId);
    expect(rows[0]).toEqual(failed);
    expect(rows[1]).toEqual(second);
    expect(rows.map((r) => r.status)).toEqual(["failed", "failed", "completed"]);
  });

  it("a cancel by request_id cancels the newest attempt, under its own queue job id", async () => {
    const { token, entityId, requestId, failed } = await failedSync();
    provider.hold = true;
    const pending = await sync(token, { entity_id: entityId, request_id: requestId });
    expect(pending.status).toBe(202);
    expect(pending.body).toMatchObject({ status: expect.stringMatching(/queued|running/), attempt: 2, retry_of: failed.id });
    const newest = (await attempts(requestId))[1];
    const queue = h.deps.queues.get("notes-sync");
    const jobId = notesJobId(failed.userId, requestId, 2);
    // The new attempt has its own queue entry; the failed attempt's is gone (removed when it ended).
    expect(jobId).not.toBe(notesJobId(failed.userId, requestId));
    expect(await queue.getJobState(jobId)).toMatch(/waiting|active/);
    expect(await queue.getJob(notesJobId(failed.userId, requestId))).toBeUndefined();

    const cancelled = await h.http.post(`/api/meetingnotes/sync/${requestId}/cancel`).set(bearer(token));
    expect(cancelled.status, JSON.stringify(cancelled.body)).toBe(200);
    expect(cancelled.body).toEqual({ status: "cancelled", request_id: requestId, entity_id: entityId, attempt: 2, retry_of: failed.id });
    provider.release();
    const rows = await attempts(requestId);
    expect(rows[0]).toEqual(failed);
    expect(rows[1]).toMatchObject({ id: newest?.id, status: "cancelled" });
    // A cancelled attempt is final too: the same request_id is then refused.
    const after = await sync(token, { entity_id: entityId, request_id: requestId });
    expect(after.status).toBe(409);
    await eventually(async () => ((await queue.getJob(jobId)) ? undefined : true));
    expect(await attempts(requestId)).toHaveLength(2);
  });
});
