import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHarness, type Harness } from "../helpers/harness.js";
import { addMember, auth, createTeam, ingest, type Team, tablesContaining } from "./support.js";

/**
 * Deleting a knowledge record (DELETE /agent/v1/knowledge/insights/{insight_id}, editors) and a saved
 * context page (DELETE /agent/v1/context/pages/{page_id}, its owner): the words of each are in no table
 * afterwards, the change feed says the record was deleted without its title, and a second delete is a 204.
 */
const RECORD_WORD = "brindlewhorf";
const PAGE_WORD = "zantequillo";

let h: Harness;
let team: Team;
let contentId: string;

beforeAll(async () => {
  h = await createHarness();
  team = await createTeam(h);
  const stored = await ingest(h, team.token, team.entityId, [
    { platform: "reddit", author: "carol", content: "The export keeps crashing." },
  ]);
  contentId = stored.content_ids[0] as string;
}, 60_000);
afterAll(async () => {
  await h?.close();
});

async function createRecord(title: string): Promise<string> {
  const res = await h.http
    .post("/agent/v1/knowledge/insights")
    .set(auth(team.token))
    .send({
      entity_id: team.entityId,
      request_id: randomUUID(),
      expected_revision: 0,
      title,
      summary: `Summary: ${title}`,
      evidence: [{ content_id: contentId, quote: "The export keeps crashing" }],
    });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.record.id;
}

describe("DELETE /agent/v1/knowledge/insights/{insight_id}", () => {
  it("deletes the record, its revisions and its text everywhere, and tells the change feed", async () => {
    const kept = await createRecord("Exports crash");
    const id = await createRecord(`The ${RECORD_WORD} finding`);
    const revised = await h.http
      .put(`/agent/v1/knowledge/insights/${id}`)
      .set(auth(team.token))
      .send({
        entity_id: team.entityId,
        request_id: randomUUID(),
        expected_revision: 1,
        title: `The ${RECORD_WORD} finding, revised`,
        summary: `Still ${RECORD_WORD}.`,
        evidence: [{ content_id: contentId, quote: "keeps crashing" }],
      });
    expect(revised.status, JSON.stringify(revised.body)).toBe(200);
    await h.http.post("/api/share-links").set(auth(team.token)).send({ resource: "knowledge_record", id }).expect(201);
    expect(await tablesContaining(h, RECORD_WORD)).not.toEqual([]);

    const viewer = await addMember(h, team, "viewer");
    const url = `/agent/v1/knowledge/insights/${id}?entity_id=${team.entityId}`;
    expect((await h.http.delete(url).set(auth(viewer.token))).status).toBe(403);
    const outsider = await createTeam(h, "Globex");
    expect((await h.http.delete(url).set(auth(outsider.token))).status).toBe(404);
    expect((await h.http.delete(`/agent/v1/knowledge/insights/${id}`).set(auth(team.token))).status).toBe(400);
    expect(
      (await h.http.delete(`/agent/v1/knowledge/insights/${randomUUID()}?entity_id=${team.entityId}`).set(auth(team.token))).status,
    ).toBe(404);

    const res = await h.http.delete(url).set(auth(team.token));
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({
      insight_id: id,
      deleted: true,
      entity_id: team.entityId,
      revision: 2,
      removed: { revisions: 2, citations: 2, share_links: 1, change_events_cleared: 2 },
    });
    expect(await tablesContaining(h, RECORD_WORD)).toEqual([]);
    expect((await h.http.get(url).set(auth(team.token))).status).toBe(404);

    // The feed keeps every number; the record's events lose their titles and a `deleted` event follows.
    const feed = await h.http.get(`/agent/v1/knowledge/changes?entity_id=${team.entityId}`).set(auth(team.token));
    const mine = feed.body.events.filter((e: { insight_id: string }) => e.insight_id === id);
    expect(mine.map((e: { kind: string; title: string }) => [e.kind, e.title])).toEqual([
      ["created", ""],
      ["revised", ""],
      ["deleted", ""],
    ]);
    expect(mine.at(-1)).toMatchObject({ seq: res.body.change_seq, revision: 2, actor_id: team.userId });
    expect(feed.body.events.map((e: { seq: string }) => Number(e.seq))).toEqual([1, 2, 3, 4]);

    // Idempotent, with the same checks; the other record is untouched.
    expect((await h.http.delete(url).set(auth(team.token))).status).toBe(204);
    expect((await h.http.delete(url).set(auth(viewer.token))).status).toBe(403);
    expect((await h.http.delete(url).set(auth(outsider.token))).status).toBe(404);
    expect((await h.http.get(`/agent/v1/knowledge/insights/${kept}?entity_id=${team.entityId}`).set(auth(team.token))).status).toBe(200);
    const audit = await h.http.get(`/api/workspaces/${team.workspaceId}/audit`).set(auth(team.token));
    expect(audit.body.entries.find((e: { action: string }) => e.action === "knowledge_record.deleted")).toMatchObject({ target: id });
  });
});

describe("DELETE /agent/v1/context/pages/{page_id}", () => {
  it("deletes the caller's own page with its embedding and search entry; others' pages are 404", async () => {
    const save = await h.http
      .post("/agent/v1/context/save")
      .set(auth(team.token))
      .send({ title: `Notes on ${PAGE_WORD}`, content: `The ${PAGE_WORD} plan, in detail.` });
    expect(save.status, JSON.stringify(save.body)).toBe(200);
    const id = save.body.id as string;
    const recall = () => h.http.get(`/agent/v1/context/recall?query=${PAGE_WORD}`).set(auth(team.token));
    expect((await recall()).body.results.map((r: { path: string }) => r.path)).toEqual([save.body.path]);

    const other = await createTeam(h, "Initech");
    expect((await h.http.delete(`/agent/v1/context/pages/${id}`).set(auth(other.token))).status).toBe(404);
    expect((await h.http.delete(`/agent/v1/context/pages/${randomUUID()}`).set(auth(team.token))).status).toBe(404);

    const res = await h.http.delete(`/agent/v1/context/pages/${id}`).set(auth(team.token));
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ page_id: id, deleted: true, version: 1 });
    expect(await tablesContaining(h, PAGE_WORD)).toEqual([]);
    expect((await recall()).body.results).toEqual([]);
    expect((await h.http.delete(`/agent/v1/context/pages/${id}`).set(auth(team.token))).status).toBe(204);
    expect((await h.http.delete(`/agent/v1/context/pages/${id}`).set(auth(other.token))).status).toBe(404);
  });
});
