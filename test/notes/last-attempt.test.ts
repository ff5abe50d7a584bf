import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { notesSyncProcessor } from "../../workers/notes-sync.js";
import { processor } from "../../workers/runtime.js";
import { createHarness, type Harness } from "../helpers/harness.js";
import { FakeNotesProvider } from "./fake-provider.js";
import { eventually, userWithEntity } from "./helpers.js";

/**
 * An unexpected error in a meeting-note sync is retried (the catalog's 3 attempts); when the last one
 * fails, the worker runtime fails the sync through the processor's own hook: `failed` with
 * `internal_error`, once, whatever the attempts before it did.
 */
const API_KEY = `grn_${randomUUID().replaceAll("-", "")}`;
let provider: FakeNotesProvider;
let h: Harness;
let calls = 0;

const broken = processor<"notes.sync.v1">(
  async () => {
    calls++;
    throw new Error("the database connection was lost");
  },
  { onLastFailure: notesSyncProcessor.onLastFailure },
);

beforeAll(async () => {
  provider = new FakeNotesProvider(API_KEY);
  const url = await provider.start();
  h = await createHarness({ MEETINGNOTES_API_URL: url, NOTES_SYNC_WAIT_MS: "0" });
  h.startWorkers({ "notes.sync.v1": broken });
});
afterAll(async () => {
  await h?.close();
  await provider?.close();
});

describe("a meeting-note sync whose every attempt fails unexpectedly", () => {
  it("is failed with internal_error after its last attempt, not before", async () => {
    const { token, entityId } = await userWithEntity(h);
    const requestId = `broken-${randomUUID()}`;
    const started = await h.http
      .post("/api/meetingnotes/sync")
      .set({ Authorization: `Bearer ${token}` })
      .send({ api_key: API_KEY, entity_id: entityId, request_id: requestId });
    expect(started.status, JSON.stringify(started.body)).toBe(202);

    const failed = await eventually(async () => {
      const row = await h.deps.db.noteSync.findFirst({ where: { requestId } });
      return row?.status === "failed" ? row : undefined;
    });
    expect(calls).toBe(3);
    expect(failed).toMatchObject({ status: "failed", errorCode: "internal_error", attempt: 1 });
    const read = await h.http.get(`/api/meetingnotes/sync/${requestId}`).set({ Authorization: `Bearer ${token}` });
    expect(read.body).toMatchObject({ status: "failed", error: { code: "internal_error" } });
  });
});
