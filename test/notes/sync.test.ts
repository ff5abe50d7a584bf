import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { notesSyncProcessor } from "../../workers/notes-sync.js";
import { createHarness, type Harness } from "../helpers/harness.js";
import { FakeNotesProvider, folderId, makeNote } from "./fake-provider.js";
import { userWithEntity } from "./helpers.js";

const API_KEY = `grn_${randomUUID().replaceAll("-", "")}`;
let provider: FakeNotesProvider;
let h: Harness;

beforeAll(async () => {
  provider = new FakeNotesProvider(API_KEY);
  const url = await provider.start();
  h = await createHarness({ MEETINGNOTES_API_URL: url });
  h.startWorkers({ "notes.sync.v1": notesSyncProcessor });
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

describe("POST /api/meetingnotes/sync", () => {
  it("imports pages with cursors: notes as rows, utterances as quotable child rows, summaries as knowledge", async () => {
    const folder = folderId();
    const notes = [1, 2, 3, 4, 5].map((i) => makeNote(100 + i, { folder }));
    provider.notes.push(...notes, makeNote(200)); // one note outside the folder
    const { token, entityId } = await userWithEntity(h);

    const seen: string[] = [];
    let cursor: string | null = null;
    const pages: { imported: number; has_more: boolean }[] = [];
    do {
      const res = await sync(token, { entity_id: entityId, folder_id: folder, max_notes: 2, ...(cursor ? { cursor } : {}) });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.status).toBe("completed");
      expect(res.body.notes.length).toBeLessThanOrEqual(2);
      seen.push(...res.body.notes.map((n: { note_id: string }) => n.note_id));
      pages.push({ imported: res.body.imported, has_more: res.body.has_more });
      cursor = res.body.next_cursor;
      expect(cursor === null).toBe(!res.body.has_more);
    } while (cursor);

    expect(pages).toEqual([
      { imported: 2, has_more: true },
      { imported: 2, has_more: true },
      { imported: 1, has_more: false },
    ]);
    // Newest first, every folder note once, and only those.
    expect(seen).toEqual([...notes].reverse().map((n) => n.id));
    expect(provider.requests.every((r) => r.authorization === `Bearer ${API_KEY}`)).toBe(true);
    expect(provider.requests.filter((r) => r.path === "/v1/notes").every((r) => r.query.get("folder_id") === folder)).toBe(true);

    const db = h.deps.db;
    const first = notes[0];
    if (!first) throw new Error("no note");
    const noteRow = await db.content.findFirstOrThrow({ where: { entityId, externalId: first.id } });
    expect(noteRow).toMatchObject({
      platform: "meetingnotes",
      kind: "source",
      parentId: null,
      title: first.title,
      author: "Oat Benson <oat@example.com>",
    });
    expect(noteRow.content).toContain("Raisin Patel");
    const utterances = await db.content.findMany({ where: { parentId: noteRow.id }, orderBy: { publishedAt: "asc" } });
    // Four utterances, one of them blank: three rows.
    expect(utterances).toHaveLength(3);
    expect(utterances.map((u) => u.author)).toEqual(["microphone", "Speaker B", "microphone"]);
    expect(utterances[1]).toMatchObject({ platform: "meetingnotes", kind: "comment", content: first.transcript?.[1]?.text });
    expect(utterances[1]?.metadata).toMatchObject({
      note_id: first.id,
      utterance_index: 1,
      start_time: first.transcript?.[1]?.start_time,
      end_time: first.transcript?.[1]?.end_time,
      speaker_source: "speaker",
      diarization_label: "Speaker B",
    });

    const knowledge = await db.knowledge.findMany({ where: { entityId } });
    expect(knowledge).toHaveLength(5);
    expect(knowledge.find((k) => k.externalId === first.id)).toMatchObject({
      kind: "meeting_summary",
      platform: "meetingnotes",
      content: first.summary_text,
    });
  });

  it("keeps summaries out of content_store entirely", async () => {
    const marker = `UNIQUE-SUMMARY-${randomUUID()}`;
    const note = makeNote(300, { summary: marker });
    provider.notes.push(note);
    const { token, entityId } = await userWithEntity(h);
    const res = await sync(token, { entity_id: entityId, created_after: "2026-10-01T00:00:00Z" });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.notes.map((n: { note_id: string }) => n.note_id)).toEqual([note.id]);

    const inKnowledge = await h.deps.db.$queryRaw<{ n: bigint }[]>`
      SELECT count(*)::bigint AS n FROM knowledge WHERE content LIKE ${`%${marker}%`} OR metadata::text LIKE ${`%${marker}%`}`;
    expect(Number(inKnowledge[0]?.n)).toBeGreaterThan(0);
    const inContent = await h.deps.db.$queryRaw<{ n: bigint }[]>`
      SELECT count(*)::bigint AS n FROM content_store
      WHERE content LIKE ${`%${marker}%`} OR title LIKE ${`%${marker}%`} OR coalesce(metadata::text, '') LIKE ${`%${marker}%`}`;
    expect(Number(inContent[0]?.n)).toBe(0);
    // Nor is it in the answer (stored on the sync row).
    expect(JSON.stringify(res.body)).not.toContain(marker);
  });

  it("imports notes with and without transcripts", async () => {
    const withTranscript = makeNote(400);
    const without = makeNote(401, { transcript: false });
    provider.notes.push(withTranscript, without);
    const { token, entityId } = await userWithEntity(h);
    const res = await sync(token, { entity_id: entityId, created_after: "2027-02-01T00:00:00Z", max_notes: 5 });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const byId = Object.fromEntries(res.body.notes.map((n: { note_id: string }) => [n.note_id, n]));
    expect(byId[withTranscript.id]).toMatchObject({ status: "imported", utterances: 3, transcript_included: true });
    expect(byId[without.id]).toMatchObject({ status: "imported", utterances: 0, transcript_included: false });
    expect(res.body.content_ids).toHaveLength(2 + 3);
    expect(provider.requests.filter((r) => r.path.startsWith("/v1/notes/not_")).every((r) => r.query.get("include") === "transcript")).toBe(
      true,
    );

    // include_transcript false: note rows only, and the provider is not asked for transcripts.
    const other = await userWithEntity(h);
    const before = provider.requests.length;
    const bare = await sync(other.token, { entity_id: other.entityId, created_after: "2027-02-01T00:00:00Z", include_transcript: false });
    expect(bare.status).toBe(200);
    expect(bare.body.content_ids).toHaveLength(2);
    expect(provider.requests.slice(before).some((r) => r.query.get("include") === "transcript")).toBe(false);
    expect(await h.deps.db.content.count({ where: { entityId: other.entityId, kind: "comment" } })).toBe(0);
  });

  it("deduplicates a re-import of the same notes", async () => {
    provider.notes.push(makeNote(500), makeNote(501));
    const { token, entityId } = await userWithEntity(h);
    const body = { entity_id: entityId, created_after: "2027-05-01T00:00:00Z" };
    const first = await sync(token, body);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ imported: 2, skipped_dedup: 0, rows_inserted: 8, rows_skipped_dedup: 0 });
    const rows = await h.deps.db.content.count({ where: { entityId } });
    const knowledge = await h.deps.db.knowledge.count({ where: { entityId } });

    const again = await sync(token, body); // a new request_id: a real second import
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ imported: 0, skipped_dedup: 2, rows_inserted: 0, rows_skipped_dedup: 8 });
    expect(again.body.content_ids).toEqual(first.body.content_ids);
    expect(again.body.knowledge_ids.sort()).toEqual(first.body.knowledge_ids.sort());
    expect(await h.deps.db.content.count({ where: { entityId } })).toBe(rows);
    expect(await h.deps.db.knowledge.count({ where: { entityId } })).toBe(knowledge);
  });

  it("is idempotent on request_id: same body replays, a different body is a 409", async () => {
    provider.notes.push(makeNote(600));
    const { token, entityId } = await userWithEntity(h);
    const body = { entity_id: entityId, created_after: "2027-08-01T00:00:00Z", request_id: `req-${randomUUID()}` };
    const first = await sync(token, body);
    expect(first.status).toBe(200);
    const calls = provider.requests.length;
    const replay = await sync(token, { ...body, api_key: "another-key-rotated" });
    expect(replay.status).toBe(200);
    expect(replay.body).toEqual(first.body);
    expect(provider.requests.length).toBe(calls);

    const conflict = await sync(token, { ...body, max_notes: 3 });
    expect(conflict.status).toBe(409);
    expect(conflict.body.code).toBe("idempotency_conflict");

    const status = await h.http.get(`/api/meetingnotes/sync/${body.request_id}`).set("Authorization", `Bearer ${token}`);
    expect(status.status).toBe(200);
    expect(status.body).toEqual(first.body);
    const stranger = await h.http.get(`/api/meetingnotes/sync/${body.request_id}`).set("Authorization", `Bearer ${await h.token()}`);
    expect(stranger.status).toBe(404);
  });

  it("two concurrent requests with one request_id run one import", async () => {
    provider.notes.push(makeNote(650));
    const { token, entityId } = await userWithEntity(h);
    const body = { entity_id: entityId, created_after: "2027-09-01T00:00:00Z", request_id: `req-${randomUUID()}` };
    const before = provider.count("list");
    const answers = await Promise.all([sync(token, body), sync(token, body), sync(token, body)]);
    for (const a of answers) expect(a.status).toBe(200);
    expect(answers[1]?.body).toEqual(answers[0]?.body);
    expect(answers[2]?.body).toEqual(answers[0]?.body);
    expect(provider.count("list") - before).toBe(1);
    expect(await h.deps.db.noteSync.count({ where: { requestId: body.request_id } })).toBe(1);
  });

  it("takes a bearer or a key with ingest, and refuses entities the caller cannot see", async () => {
    provider.notes.push(makeNote(700));
    const { token, entityId } = await userWithEntity(h);
    const key = async (scopes: string[]) =>
      (await h.http.post("/api/user/keys").set("Authorization", `Bearer ${token}`).send({ name: "k", scopes })).body.raw_key as string;
    const ingestKey = await key(["ingest"]);
    const exportKey = await key(["export"]);
    const body = { api_key: API_KEY, entity_id: entityId, created_after: "2027-10-01T00:00:00Z" };
    expect((await h.http.post("/api/meetingnotes/sync").set("X-API-Key", ingestKey).send(body)).status).toBe(200);
    expect((await h.http.post("/api/meetingnotes/sync").set("X-API-Key", exportKey).send(body)).status).toBe(403);
    expect((await h.http.post("/api/meetingnotes/sync").send(body)).status).toBe(401);
    const stranger = await sync(await h.token(), { entity_id: entityId });
    expect(stranger.status).toBe(404);
    expect((await sync(token, { entity_id: "not-a-uuid" })).status).toBe(404);
  });

  it("validates every field to the spec", async () => {
    const { token, entityId } = await userWithEntity(h);
    const refused = async (body: Record<string, unknown>, loc: string) => {
      const res = await h.http.post("/api/meetingnotes/sync").set("Authorization", `Bearer ${token}`).send(body);
      expect(res.status, `${loc}: ${JSON.stringify(res.body)}`).toBe(422);
      expect(res.body.detail.map((d: { loc: string[] }) => d.loc.join("."))).toContain(loc);
    };
    const ok = { api_key: API_KEY, entity_id: entityId };
    await refused({ entity_id: entityId }, "body.api_key");
    await refused({ api_key: API_KEY }, "body.entity_id");
    await refused({ ...ok, api_key: "1234567" }, "body.api_key");
    await refused({ ...ok, api_key: "x".repeat(501) }, "body.api_key");
    await refused({ ...ok, entity_id: "" }, "body.entity_id");
    await refused({ ...ok, entity_id: "x".repeat(101) }, "body.entity_id");
    await refused({ ...ok, created_after: "yesterday" }, "body.created_after");
    await refused({ ...ok, folder_id: "fol_short" }, "body.folder_id");
    await refused({ ...ok, folder_id: "fld_4y6LduVdwSKC27" }, "body.folder_id");
    await refused({ ...ok, max_notes: 0 }, "body.max_notes");
    await refused({ ...ok, max_notes: 21 }, "body.max_notes");
    await refused({ ...ok, max_notes: 2.5 }, "body.max_notes");
    await refused({ ...ok, include_transcript: "yes" }, "body.include_transcript");
    await refused({ ...ok, cursor: "c".repeat(4001) }, "body.cursor");
    await refused({ ...ok, request_id: "1234567" }, "body.request_id");
    await refused({ ...ok, request_id: "r".repeat(129) }, "body.request_id");

    // The upper bounds themselves are accepted.
    const res = await h.http
      .post("/api/meetingnotes/sync")
      .set("Authorization", `Bearer ${token}`)
      .send({ ...ok, max_notes: 20, request_id: "r".repeat(128), folder_id: "fol_4y6LduVdwSKC27", created_after: null, cursor: null });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ imported: 0, notes: [], has_more: false, next_cursor: null, request_id: "r".repeat(128) });
  });
});
