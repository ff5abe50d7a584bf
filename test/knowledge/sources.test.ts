import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHarness, type Harness } from "../helpers/harness.js";
import { auth, createInsight, createTeam, insightBody, knowledgeCounts, reviseInsight, TEXTS, type Team } from "./support.js";

let h: Harness;
let team: Team;

beforeAll(async () => {
  h = await createHarness();
  team = await createTeam(h);
});
afterAll(async () => {
  await h?.close();
});

const read = (id: string, query = "") =>
  h.http.get(`/agent/v1/knowledge/insights/${id}?entity_id=${team.entityId}${query}`).set(auth(team.token));

describe("snapshots of cited originals", () => {
  it("an original edited after citation: the old revision still resolves its snapshot; a new citation captures the new text", async () => {
    const quote = "Export to CSV broke twice this week";
    const created = await createInsight(h, team.token, insightBody(team, { evidence: [{ content_id: team.content.export, quote }] }));
    expect(created.status).toBe(201);
    const id = created.body.record.id;
    const oldSource = created.body.record.evidence[0].source_revision_id;

    const edited = "Export to CSV works again since the fix. We no longer need a workaround.";
    await h.deps.db.content.update({ where: { id: team.content.export }, data: { content: edited } });

    // The current original reads the new text; the old snapshot keeps the old one.
    const original = await h.http
      .get(`/agent/v1/knowledge/content/${team.content.export}?entity_id=${team.entityId}`)
      .set(auth(team.token));
    expect(original.status).toBe(200);
    expect(original.body.text).toBe(edited);
    const snapshot = await h.http.get(`/agent/v1/knowledge/sources/${oldSource}?entity_id=${team.entityId}`).set(auth(team.token));
    expect(snapshot.status).toBe(200);
    expect(snapshot.body).toMatchObject({
      source_revision_id: oldSource,
      content_id: team.content.export,
      available: true,
      text: TEXTS.export,
    });

    // Citing the original again with the old quote fails: it is checked against the current text.
    const stale = await reviseInsight(
      h,
      team.token,
      id,
      insightBody(team, { expected_revision: 1, evidence: [{ content_id: team.content.export, quote }] }),
    );
    expect(stale.status).toBe(422);
    expect(stale.body.detail[0]).toMatchObject({ loc: ["body", "evidence", 0, "quote"], type: "quote_not_verbatim" });

    // Citing the old snapshot still works; citing the original captures a new snapshot.
    const revised = await reviseInsight(
      h,
      team.token,
      id,
      insightBody(team, {
        expected_revision: 1,
        evidence: [
          { source_revision_id: oldSource, quote, relation: "supports" },
          { content_id: team.content.export, quote: "Export to CSV works again since the fix", relation: "contradicts" },
        ],
      }),
    );
    expect(revised.status, JSON.stringify(revised.body)).toBe(200);
    const [kept, fresh] = revised.body.record.evidence;
    expect(kept.source_revision_id).toBe(oldSource);
    expect(fresh.source_revision_id).not.toBe(oldSource);
    expect(fresh).toMatchObject({ content_id: team.content.export, relation: "contradicts" });

    const first = await read(id, "&revision=1");
    expect(first.status).toBe(200);
    expect(first.body.record).toMatchObject({ revision: 1 });
    expect(first.body.current_revision).toBe(2);
    expect(first.body.resolved_evidence).toEqual([
      expect.objectContaining({
        source_revision_id: oldSource,
        available: true,
        span: { start: 0, end: quote.length, text: quote },
        source_text_kind: "original",
      }),
    ]);
    expect(first.body.sources).toEqual([expect.objectContaining({ source_revision_id: oldSource, available: true })]);
    expect(first.body.unavailable_source_ids).toEqual([]);
  });

  it("a deleted original reads back as unavailable evidence, and its snapshot can no longer be cited", async () => {
    const ingest = await h.http
      .post("/agent/v1/ingest/content")
      .set(auth(team.token))
      .send({ entity_id: team.entityId, sources: [{ platform: "reddit", content: "Dark mode hurts my eyes at night, please fix it." }] });
    const contentId = ingest.body.content_ids[0];
    const created = await createInsight(
      h,
      team.token,
      insightBody(team, {
        evidence: [
          { content_id: contentId, quote: "Dark mode hurts my eyes" },
          { content_id: team.content.praise, quote: "The editor is fast", relation: "contradicts" },
        ],
      }),
    );
    expect(created.status).toBe(201);
    const id = created.body.record.id;
    const gone = created.body.record.evidence[0].source_revision_id;

    await h.deps.db.content.delete({ where: { id: contentId } });

    const after = await read(id);
    expect(after.status).toBe(200);
    // The revision itself is unchanged: its evidence list still names the citation.
    expect(after.body.record.evidence).toEqual(created.body.record.evidence);
    expect(after.body.unavailable_source_ids).toEqual([gone]);
    expect(after.body.resolved_evidence[0]).toMatchObject({ source_revision_id: gone, available: false, span: null });
    expect(after.body.resolved_evidence[1]).toMatchObject({ available: true, span: { text: "The editor is fast" } });
    const snapshot = await h.http.get(`/agent/v1/knowledge/sources/${gone}?entity_id=${team.entityId}`).set(auth(team.token));
    expect(snapshot.status).toBe(200);
    expect(snapshot.body).toMatchObject({ available: false, text: null, removed_at: expect.any(String) });
    const row = await h.deps.db.knowledgeSourceRevision.findUniqueOrThrow({ where: { id: gone } });
    expect(row.text).toBeNull();

    const recite = await reviseInsight(
      h,
      team.token,
      id,
      insightBody(team, { expected_revision: 1, evidence: [{ source_revision_id: gone, quote: "Dark mode hurts my eyes" }] }),
    );
    expect(recite.status).toBe(422);
    expect(recite.body.detail[0]).toMatchObject({ loc: ["body", "evidence", 0, "source_revision_id"], type: "source_unavailable" });
  });

  it("a source_revision_id with a content_id of another original is refused", async () => {
    const created = await createInsight(h, team.token, insightBody(team));
    const snapshotId = created.body.record.evidence[0].source_revision_id;
    const res = await createInsight(
      h,
      team.token,
      insightBody(team, {
        evidence: [{ source_revision_id: snapshotId, content_id: team.content.praise, quote: "the pricing page is confusing" }],
      }),
    );
    expect(res.status).toBe(422);
    expect(res.body.detail[0]).toMatchObject({ loc: ["body", "evidence", 0, "content_id"], type: "source_mismatch" });
  });
});

describe("interpretations", () => {
  it("a meeting note's own row may only be cited as context", async () => {
    const ingest = await h.http
      .post("/agent/v1/ingest/content")
      .set(auth(team.token))
      .send({
        entity_id: team.entityId,
        sources: [
          {
            id: "not_interpret0001",
            platform: "meetingnotes",
            title: "Weekly sync",
            content: "Weekly sync with Globex, attendees: Ana, Ben. Calendar: renewal review.",
            metadata: { kind: "meeting_note" },
          },
        ],
      });
    expect(ingest.status).toBe(200);
    const noteId = ingest.body.content_ids[0];
    const listed = await h.http.get(`/agent/v1/knowledge/content/${noteId}?entity_id=${team.entityId}`).set(auth(team.token));
    expect(listed.body).toMatchObject({ text_kind: "interpretation", allowed_relations: ["context"] });

    const before = await knowledgeCounts(h);
    const supports = await createInsight(
      h,
      team.token,
      insightBody(team, { evidence: [{ content_id: noteId, quote: "renewal review", relation: "supports" }] }),
    );
    expect(supports.status).toBe(422);
    expect(supports.body.detail).toEqual([
      { loc: ["body", "evidence", 0, "relation"], msg: expect.stringContaining("context"), type: "relation_not_allowed" },
    ]);
    expect(await knowledgeCounts(h)).toEqual(before);

    const context = await createInsight(
      h,
      team.token,
      insightBody(team, {
        evidence: [
          { content_id: noteId, quote: "Calendar: renewal review", relation: "context" },
          { content_id: team.content.praise, quote: "markdown shortcuts just work", relation: "supports" },
        ],
      }),
    );
    expect(context.status, JSON.stringify(context.body)).toBe(201);
    const snapshotId = context.body.record.evidence[0].source_revision_id;
    // An explicitly cited snapshot of the interpretation keeps the rule.
    const again = await createInsight(
      h,
      team.token,
      insightBody(team, { evidence: [{ source_revision_id: snapshotId, quote: "Calendar: renewal review", relation: "contradicts" }] }),
    );
    expect(again.status).toBe(422);
    expect(again.body.detail[0].type).toBe("relation_not_allowed");
    const got = await read(context.body.record.id);
    expect(got.body.resolved_evidence[0]).toMatchObject({ source_text_kind: "interpretation", allowed_relations: ["context"] });
  });
});
