import { randomUUID } from "node:crypto";
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

describe("creating a record", () => {
  it("answers a receipt whose record carries the fields, the authenticated actor and a pinned quote", async () => {
    const body = insightBody(team);
    const res = await createInsight(h, team.token, body);
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body).toMatchObject({ saved: true, replayed: false, change_seq: expect.stringMatching(/^\d+$/) });
    const record = res.body.record;
    expect(record).toMatchObject({
      id: expect.any(String),
      entity_id: team.entityId,
      project_id: null,
      revision: 1,
      title: body.title,
      summary: body.summary,
      reasoning: body.reasoning,
      limitations: body.limitations,
      tags: body.tags,
      origin: "agent",
      actor_id: team.userId,
      client_label: "test-agent",
      review_state: "unreviewed",
      analysis_id: null,
    });
    expect(Date.parse(record.created_at)).not.toBeNaN();
    expect(record.updated_at).toBe(record.created_at);
    expect(record.evidence).toEqual([
      {
        source_revision_id: expect.any(String),
        content_id: team.content.pricing,
        quote: "the pricing page is confusing",
        relation: "supports",
        start: TEXTS.pricing.indexOf("the pricing"),
        end: TEXTS.pricing.indexOf("the pricing") + "the pricing page is confusing".length,
      },
    ]);
  });

  it("counts start in code points: a quote after an emoji is found at its code-point offset", async () => {
    const quote = "but the support team answered within minutes";
    const start = Array.from(TEXTS.pricing).join("").indexOf(quote) - 1; // one emoji: two UTF-16 units, one code point
    expect(
      Array.from(TEXTS.pricing)
        .slice(start, start + Array.from(quote).length)
        .join(""),
    ).toBe(quote);
    const ok = await createInsight(h, team.token, insightBody(team, { evidence: [{ content_id: team.content.pricing, quote, start }] }));
    expect(ok.status, JSON.stringify(ok.body)).toBe(201);
    expect(ok.body.record.evidence[0]).toMatchObject({ start, end: start + quote.length, relation: "supports" });

    const utf16 = await createInsight(
      h,
      team.token,
      insightBody(team, { evidence: [{ content_id: team.content.pricing, quote, start: start + 1 }] }),
    );
    expect(utf16.status).toBe(422);
    expect(utf16.body.detail).toEqual([
      { loc: ["body", "evidence", 0, "quote"], msg: expect.stringContaining(`code point ${start + 1}`), type: "quote_not_verbatim" },
    ]);
  });

  it("refuses expected_revision other than 0 on create", async () => {
    const res = await createInsight(h, team.token, insightBody(team, { expected_revision: 3 }));
    expect(res.status).toBe(422);
    expect(res.body.detail[0].loc).toEqual(["body", "expected_revision"]);
  });
});

describe("a quote that is not verbatim", () => {
  it("is a 422 naming the citation, and nothing is saved (no record, revision, snapshot, event or request)", async () => {
    const before = await knowledgeCounts(h);
    const res = await createInsight(
      h,
      team.token,
      insightBody(team, {
        evidence: [
          { content_id: team.content.pricing, quote: "the pricing page is confusing" },
          { content_id: team.content.export, quote: "Export to CSV broke three times this week" },
        ],
      }),
    );
    expect(res.status).toBe(422);
    expect(res.body.detail).toEqual([{ loc: ["body", "evidence", 1, "quote"], msg: expect.any(String), type: "quote_not_verbatim" }]);
    expect(await knowledgeCounts(h)).toEqual(before);
  });

  it("is refused on revision too, leaving the record at its revision", async () => {
    const created = await createInsight(h, team.token, insightBody(team));
    const id = created.body.record.id;
    const before = await knowledgeCounts(h);
    const res = await reviseInsight(
      h,
      team.token,
      id,
      insightBody(team, { expected_revision: 1, evidence: [{ content_id: team.content.praise, quote: "The editor is slow" }] }),
    );
    expect(res.status).toBe(422);
    expect(await knowledgeCounts(h)).toEqual(before);
    const read = await h.http.get(`/agent/v1/knowledge/insights/${id}?entity_id=${team.entityId}`).set(auth(team.token));
    expect(read.body.record.revision).toBe(1);
  });

  it("takes a short verbatim quote, and names every blank quote and unknown source", async () => {
    const short = await createInsight(h, team.token, insightBody(team, { evidence: [{ content_id: team.content.praise, quote: "fast" }] }));
    expect(short.status, JSON.stringify(short.body)).toBe(201);
    const res = await createInsight(
      h,
      team.token,
      insightBody(team, {
        evidence: [
          { content_id: team.content.pricing, quote: "   " },
          { content_id: randomUUID(), quote: "the pricing page is confusing" },
        ],
      }),
    );
    expect(res.status).toBe(422);
    const where = res.body.detail.map((d: { loc: unknown[]; type: string }) => [d.loc.join("."), d.type]);
    expect(where).toEqual(
      expect.arrayContaining([
        ["body.evidence.0.quote", "quote_too_short"],
        ["body.evidence.1.content_id", "source_not_found"],
      ]),
    );
    const unnamed = await createInsight(h, team.token, insightBody(team, { evidence: [{ quote: "the pricing page is confusing" }] }));
    expect(unnamed.status).toBe(422);
    expect(unnamed.body.detail).toEqual([
      { loc: ["body", "evidence", 0, "content_id"], msg: "Give content_id or source_revision_id", type: "value_error" },
    ]);
  });
});

describe("revising", () => {
  it("replaces the complete record: omitted optional fields reset to empty", async () => {
    const created = await createInsight(h, team.token, insightBody(team));
    const id = created.body.record.id;
    const res = await reviseInsight(h, team.token, id, {
      entity_id: team.entityId,
      request_id: randomUUID(),
      expected_revision: 1,
      title: "Pricing page confuses some buyers",
      summary: "Narrowed.",
      evidence: [{ content_id: team.content.pricing, quote: "the pricing page is confusing" }],
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.record).toMatchObject({
      id,
      revision: 2,
      title: "Pricing page confuses some buyers",
      reasoning: "",
      limitations: [],
      tags: [],
      client_label: null,
    });
    expect(res.body.record.created_at).toBe(created.body.record.created_at);
    expect(BigInt(res.body.change_seq)).toBeGreaterThan(BigInt(created.body.change_seq));
    // An unchanged original keeps its snapshot.
    expect(res.body.record.evidence[0].source_revision_id).toBe(created.body.record.evidence[0].source_revision_id);
  });

  it("with a stale expected_revision is a 409 naming the current revision, never an overwrite", async () => {
    const created = await createInsight(h, team.token, insightBody(team));
    const id = created.body.record.id;
    expect((await reviseInsight(h, team.token, id, insightBody(team, { expected_revision: 1, title: "Second" }))).status).toBe(200);
    const stale = await reviseInsight(h, team.token, id, insightBody(team, { expected_revision: 1, title: "Lost update" }));
    expect(stale.status).toBe(409);
    expect(stale.body).toEqual({ detail: expect.stringContaining("revision 2"), code: "conflict", current_revision: 2, insight_id: id });
    const zero = await reviseInsight(h, team.token, id, insightBody(team, { expected_revision: 0 }));
    expect(zero.status).toBe(409);
    expect(zero.body.current_revision).toBe(2);
    const read = await h.http.get(`/agent/v1/knowledge/insights/${id}?entity_id=${team.entityId}`).set(auth(team.token));
    expect(read.body.record).toMatchObject({ revision: 2, title: "Second" });
  });

  it("two agents revising the same revision concurrently: one wins, the other gets 409 with the winner's revision", async () => {
    const created = await createInsight(h, team.token, insightBody(team));
    const id = created.body.record.id;
    const [a, b] = await Promise.all([
      reviseInsight(h, team.token, id, insightBody(team, { expected_revision: 1, title: "Agent A", client_label: "a" })),
      reviseInsight(h, team.token, id, insightBody(team, { expected_revision: 1, title: "Agent B", client_label: "b" })),
    ]);
    const statuses = [a.status, b.status].sort();
    expect(statuses).toEqual([200, 409]);
    const winner = a.status === 200 ? a : b;
    const loser = a.status === 200 ? b : a;
    expect(loser.body).toMatchObject({ code: "conflict", current_revision: 2 });
    const read = await h.http.get(`/agent/v1/knowledge/insights/${id}?entity_id=${team.entityId}`).set(auth(team.token));
    expect(read.body.record).toMatchObject({ revision: 2, title: winner.body.record.title });
    expect(await h.deps.db.knowledgeInsightRevision.count({ where: { insightId: id } })).toBe(2);
  });

  it("answers 404 for an unknown record", async () => {
    const res = await reviseInsight(h, team.token, randomUUID(), insightBody(team, { expected_revision: 1 }));
    expect(res.status).toBe(404);
    expect(res.body.code).toBe("not_found");
  });
});

describe("request_id", () => {
  it("replays the original receipt after a lost answer, even when newer revisions exist", async () => {
    const body = insightBody(team);
    const first = await createInsight(h, team.token, body);
    expect(first.status).toBe(201);
    const id = first.body.record.id;
    const revise = insightBody(team, { expected_revision: 1, title: "Revised" });
    const second = await reviseInsight(h, team.token, id, revise);
    expect(second.status).toBe(200);
    expect((await reviseInsight(h, team.token, id, insightBody(team, { expected_revision: 2, title: "Third" }))).status).toBe(200);

    const before = await knowledgeCounts(h);
    const replayCreate = await createInsight(h, team.token, body);
    expect(replayCreate.status).toBe(201);
    expect(replayCreate.body).toEqual({ ...first.body, replayed: true });
    const replayRevise = await reviseInsight(h, team.token, id, revise);
    expect(replayRevise.status).toBe(200);
    expect(replayRevise.body).toEqual({ ...second.body, replayed: true });
    expect(await knowledgeCounts(h)).toEqual(before);
  });

  it("with a different payload is a 409 idempotency_conflict", async () => {
    const body = insightBody(team);
    expect((await createInsight(h, team.token, body)).status).toBe(201);
    const res = await createInsight(h, team.token, { ...body, summary: "Something else." });
    expect(res.status).toBe(409);
    expect(res.body).toEqual({ detail: expect.any(String), code: "idempotency_conflict" });
  });

  it("concurrent identical creates write one record; the others replay it", async () => {
    const body = insightBody(team);
    const answers = await Promise.all([1, 2, 3, 4].map(() => createInsight(h, team.token, body)));
    expect(answers.map((a) => a.status)).toEqual([201, 201, 201, 201]);
    expect(new Set(answers.map((a) => a.body.record.id)).size).toBe(1);
    expect(answers.filter((a) => a.body.replayed === false)).toHaveLength(1);
  });
});

describe("bounds", () => {
  it("refuse more than 20 citations and quotes over 4,000 characters, naming the field", async () => {
    const many = Array.from({ length: 21 }, () => ({ content_id: team.content.pricing, quote: "the pricing page is confusing" }));
    const tooMany = await createInsight(h, team.token, insightBody(team, { evidence: many }));
    expect(tooMany.status).toBe(422);
    expect(tooMany.body.detail[0]).toMatchObject({ loc: ["body", "evidence"], type: "too_long" });
    const long = await createInsight(
      h,
      team.token,
      insightBody(team, { evidence: [{ content_id: team.content.pricing, quote: "x".repeat(4001) }] }),
    );
    expect(long.status).toBe(422);
    expect(long.body.detail[0]).toMatchObject({ loc: ["body", "evidence", 0, "quote"], type: "string_too_long" });
  });

  it("refuse an original over 200,000 characters", async () => {
    const text = `${"a".repeat(199_990)} the end of a very long original`;
    const ingest = await h.http
      .post("/agent/v1/ingest/content")
      .set(auth(team.token))
      .send({ entity_id: team.entityId, sources: [{ platform: "web", content: text }] });
    expect(ingest.status).toBe(200);
    const res = await createInsight(
      h,
      team.token,
      insightBody(team, { evidence: [{ content_id: ingest.body.content_ids[0], quote: "the end of a very long original" }] }),
    );
    expect(res.status).toBe(422);
    expect(res.body.detail).toEqual([
      { loc: ["body", "evidence", 0, "content_id"], msg: expect.stringContaining("200000"), type: "source_too_large" },
    ]);
  });
});
