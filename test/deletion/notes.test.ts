import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { processors } from "../../workers/processors.js";
import { createHarness, type Harness } from "../helpers/harness.js";
import { FakeNotesProvider, makeNote } from "../notes/fake-provider.js";
import { addMember, auth, createTeam, type Team, tablesContaining } from "./support.js";

/**
 * The meeting-note import stores through the ingest service, so an erased speaker's utterances, and
 * a note whose owner was erased (its row, its utterances and its summary), are skipped and counted.
 */
const API_KEY = `grn_${randomUUID().replaceAll("-", "")}`;
let provider: FakeNotesProvider;
let h: Harness;
let team: Team;

beforeAll(async () => {
  provider = new FakeNotesProvider(API_KEY);
  h = await createHarness({ MEETINGNOTES_API_URL: await provider.start() });
  h.startWorkers(processors, 2);
  team = await createTeam(h);
});
afterAll(async () => {
  await h?.close();
  await provider?.close();
});

describe("a meeting-note import after erasures", () => {
  it("skips the erased speaker's utterances and the erased owner's note with its summary", async () => {
    const admin = await addMember(h, team, "admin");
    for (const author of ["speaker b", "Quince Lee <quince@example.com>"]) {
      const res = await h.http
        .post(`/api/workspaces/${team.workspaceId}/erasures`)
        .set(auth(admin.token))
        .send({ platform: "meetingnotes", author });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
    }
    const kept = makeNote(1);
    const erased = { ...makeNote(2), owner: { name: "Quince Lee", email: "quince@example.com" } };
    provider.notes.push(kept, erased);

    const res = await h.http
      .post("/api/meetingnotes/sync")
      .set(auth(team.token))
      .send({ api_key: API_KEY, entity_id: team.entityId, max_notes: 20 });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ imported: 1, skipped_dedup: 0, rows_inserted: 3, rows_skipped_erased: 5 });
    const byId = (id: string) => res.body.notes.find((n: { note_id: string }) => n.note_id === id);
    const [first, second] = [byId(kept.id), byId(erased.id)];
    expect(first).toMatchObject({ note_id: kept.id, status: "imported", new_rows: 3, utterances: 3 });
    expect(first.utterance_content_ids).toHaveLength(2);
    expect(first.knowledge_id).toEqual(expect.any(String));
    expect(second).toMatchObject({ note_id: erased.id, status: "skipped_erased", content_id: null, new_rows: 0, knowledge_id: null });
    expect(second.utterance_content_ids).toEqual([]);

    const rows = await h.deps.db.content.findMany({ where: { entityId: team.entityId }, select: { author: true } });
    expect(rows.map((r) => r.author).sort()).toEqual(["Oat Benson <oat@example.com>", "microphone", "microphone"]);
    expect(await h.deps.db.knowledge.count({ where: { entityId: team.entityId } })).toBe(1);

    // Deleting a note's own row takes its utterances and its summary with it.
    const deleted = await h.http.delete(`/agent/v1/content/${first.content_id}`).set(auth(team.token));
    expect(deleted.body).toMatchObject({ kind: "source", platform: "meetingnotes", removed: { rows: 3, meeting_summaries_deleted: 1 } });
    expect(await h.deps.db.knowledge.count({ where: { entityId: team.entityId } })).toBe(0);
    expect(await h.deps.db.content.count({ where: { entityId: team.entityId } })).toBe(0);
    // Neither note's title is left anywhere (the sync's stored answer named both).
    for (const title of [kept.title, erased.title]) expect(await tablesContaining(h, title)).toEqual([]);
  });
});
