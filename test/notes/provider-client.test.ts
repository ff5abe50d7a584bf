import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { providerFailure } from "../../src/intake/notes/importer.js";
import { MeetingNotesClient, MeetingNotesError } from "../../src/intake/notes/provider.js";
import { parseRetryAfterSeconds as parseRetryAfter } from "../../src/platform/http/retry-after.js";
import { FakeNotesProvider, makeNote } from "./fake-provider.js";

const KEY = "grn_client_test_key";
let provider: FakeNotesProvider;
let client: MeetingNotesClient;

beforeAll(async () => {
  provider = new FakeNotesProvider(KEY);
  const url = await provider.start();
  provider.notes.push(makeNote(1), makeNote(2, { transcript: false }));
  client = new MeetingNotesClient({ baseUrl: `${url}/`, apiKey: KEY, timeoutMs: 2000, backoffMs: 10 });
});
afterAll(() => provider.close());

describe("MeetingNotesClient", () => {
  it("lists and fetches notes in the provider's format, typed", async () => {
    const page = await client.listNotes({ pageSize: 1 });
    expect(page.notes).toHaveLength(1);
    expect(page.hasMore).toBe(true);
    expect(typeof page.cursor).toBe("string");
    const next = await client.listNotes({ pageSize: 1, cursor: page.cursor ?? undefined });
    expect(next).toMatchObject({ hasMore: false, cursor: null });
    const withTranscript = provider.notes[0]?.id ?? "";
    const note = await client.getNote(withTranscript, { includeTranscript: true });
    expect(note.transcript?.[0]).toMatchObject({ speaker: { source: "microphone" } });
    const bare = await client.getNote(withTranscript, { includeTranscript: false });
    expect(bare.transcript).toBeUndefined();
  });

  it("honours Retry-After on 429 before retrying", async () => {
    provider.faults.push({ route: "list", status: 429, headers: { "Retry-After": "1" }, times: 1 });
    const started = Date.now();
    const page = await client.listNotes({ pageSize: 5 });
    expect(page.notes).toHaveLength(2);
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
  });

  it("gives up at once when Retry-After is longer than it will wait, and the answer carries it", async () => {
    provider.faults.push({ route: "list", status: 429, headers: { "Retry-After": "120" }, times: 1 });
    const before = provider.count("list");
    const err = await client.listNotes({ pageSize: 5 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MeetingNotesError);
    expect(err).toMatchObject({ kind: "rate_limited", details: { retryAfterSeconds: 120 } });
    expect(provider.count("list") - before).toBe(1);
    const answer = providerFailure(err as MeetingNotesError);
    expect(answer).toMatchObject({ status: 503, code: "upstream_unavailable", headers: { "Retry-After": "120" } });
  });

  it("does not retry a refused key, and maps it to provider_unauthorized (502)", async () => {
    const bad = new MeetingNotesClient({ baseUrl: provider.url, apiKey: "grn_wrong", timeoutMs: 2000, backoffMs: 10 });
    const before = provider.count("list");
    const err = (await bad.listNotes({ pageSize: 5 }).catch((e: unknown) => e)) as MeetingNotesError;
    expect(err.kind).toBe("unauthorized");
    expect(provider.count("list") - before).toBe(1);
    expect(providerFailure(err)).toMatchObject({ status: 502, code: "provider_unauthorized" });
    expect(err.message).not.toContain("grn_wrong");
  });

  it("refuses answers that do not match the provider's schema", async () => {
    provider.faults.push({
      route: "list",
      status: 200,
      body: JSON.stringify({ notes: [{ id: "note-1", created_at: "x" }], hasMore: false, cursor: null }),
    });
    await expect(client.listNotes({ pageSize: 5 })).rejects.toMatchObject({ kind: "malformed" });
    await expect(client.getNote("../../etc/passwd", { includeTranscript: false })).rejects.toMatchObject({ kind: "malformed" });
  });

  it("reads Retry-After as seconds or an HTTP date", () => {
    expect(parseRetryAfter("7")).toBe(7);
    expect(parseRetryAfter(new Date(Date.now() + 5000).toUTCString())).toBeGreaterThanOrEqual(4);
    expect(parseRetryAfter("soon")).toBeUndefined();
    expect(parseRetryAfter(null)).toBeUndefined();
  });
});
