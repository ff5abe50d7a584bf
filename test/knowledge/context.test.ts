import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHarness, type Harness } from "../helpers/harness.js";
import { auth, createInsight, createTeam, insightBody, type Team } from "./support.js";

let h: Harness;
let team: Team;

beforeAll(async () => {
  h = await createHarness();
  team = await createTeam(h);
});
afterAll(async () => {
  await h?.close();
});

const context = (query: string, scope = `entity_id=${team.entityId}`) =>
  h.http.get(`/agent/v1/knowledge/context?${scope}&${query}`).set(auth(team.token));
const chars = (text: string) => Array.from(text).length;

describe("context rendering", () => {
  it("renders current records with their quotes, and is complete when everything fits", async () => {
    const created = await createInsight(
      h,
      team.token,
      insightBody(team, {
        title: "Pricing 😀 confuses buyers",
        evidence: [
          { content_id: team.content.pricing, quote: "the pricing page is confusing 😀 but", relation: "supports" },
          { content_id: team.content.praise, quote: "The editor is fast", relation: "context" },
        ],
      }),
    );
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const res = await context("");
    expect(res.status).toBe(200);
    const { markdown } = res.body;
    expect(markdown).toContain("## Pricing 😀 confuses buyers");
    expect(markdown).toContain(`insight ${created.body.record.id} · revision 1 · agent · unreviewed · actor ${team.userId}`);
    expect(markdown).toContain("  > the pricing page is confusing 😀 but");
    expect(markdown).toContain("- context: reddit · author-praise");
    expect(markdown).toContain("Limitations:\n- A single post.");
    expect(res.body).toMatchObject({
      records: [{ id: created.body.record.id, revision: 1, included: true, chars: chars(markdown) }],
      omitted_insight_ids: [],
      unresolved_evidence: [],
      unavailable_source_revision_ids: [],
      next_offset: null,
      bounds: { max_chars: 16000, chars: chars(markdown), limit: 20, offset: 0 },
      record_reader: "/agent/v1/knowledge/insights/{insight_id}?revision={revision}",
      complete: true,
    });
  });

  it("stays within max_chars (counted in code points), omitting a record that does not fit whole", async () => {
    const big = await createInsight(h, team.token, insightBody(team, { title: "Big", summary: `${"😀 long finding ".repeat(80)}end.` }));
    const small = await createInsight(h, team.token, insightBody(team, { title: "Small", summary: "Short." }));
    expect(big.status).toBe(201);
    expect(small.status).toBe(201);
    const bigId = big.body.record.id;
    const full = await context("");
    const sizes = new Map<string, number>(full.body.records.map((r: { id: string; chars: number }) => [r.id, r.chars]));
    const bigSize = sizes.get(bigId) as number;
    expect(bigSize).toBeGreaterThan(1000);
    expect(bigSize).toBeLessThan(2000);

    const res = await context("max_chars=1000");
    expect(res.status).toBe(200);
    expect(chars(res.body.markdown)).toBeLessThanOrEqual(1000);
    expect(res.body.bounds).toMatchObject({ max_chars: 1000, chars: chars(res.body.markdown) });
    // Newest first: Small is included, Big (next) is omitted whole, the older first record may still fit.
    expect(res.body.records[0]).toMatchObject({ id: small.body.record.id, included: true });
    expect(res.body.records[1]).toMatchObject({ id: bigId, included: false });
    expect(res.body.omitted_insight_ids).toContain(bigId);
    expect(res.body.markdown).not.toContain("long finding");
    expect(res.body.markdown).toContain("## Small");
    expect(res.body.complete).toBe(false);
    // Every included record is there whole: its block's size adds up.
    const included = res.body.records.filter((r: { included: boolean }) => r.included);
    const expected = included.reduce((sum: number, r: { chars: number }) => sum + r.chars, 0) + 2 * (included.length - 1);
    expect(chars(res.body.markdown)).toBe(expected);

    const roomy = await context(`max_chars=${bigSize + 1500}`);
    expect(roomy.body.omitted_insight_ids).toEqual([]);
    expect(chars(roomy.body.markdown)).toBeLessThanOrEqual(bigSize + 1500);
  });

  it("pages with limit and next_offset, and bounds max_chars to 500–50,000", async () => {
    const first = await context("limit=1");
    expect(first.body.records).toHaveLength(1);
    expect(first.body.next_offset).toBe(1);
    expect(first.body.complete).toBe(false);
    // Three records so far: the third page is the last.
    const last = await context("limit=1&offset=2");
    expect(last.body.records).toHaveLength(1);
    expect(last.body.next_offset).toBeNull();
    for (const bad of ["max_chars=499", "max_chars=50001", "limit=0", "limit=101"]) {
      const res = await context(bad);
      expect(res.status, bad).toBe(422);
      expect(res.body.detail[0].loc[0]).toBe("query");
    }
    expect((await context("max_chars=50000")).status).toBe(200);
  });

  it("names evidence whose original was deleted instead of inventing it", async () => {
    const ingest = await h.http
      .post("/agent/v1/ingest/content")
      .set(auth(team.token))
      .send({ entity_id: team.otherEntityId, sources: [{ platform: "web", content: "Setup took two hours with the wizard." }] });
    const contentId = ingest.body.content_ids[0];
    const created = await createInsight(
      h,
      team.token,
      insightBody(team, {
        entity_id: undefined,
        project_id: team.projectId,
        evidence: [{ content_id: contentId, quote: "Setup took two hours" }],
      }),
    );
    expect(created.status).toBe(201);
    const snapshot = created.body.record.evidence[0].source_revision_id;
    await h.deps.db.content.delete({ where: { id: contentId } });
    const res = await context("", `project_id=${team.projectId}`);
    expect(res.body.unresolved_evidence).toEqual([
      { insight_id: created.body.record.id, revision: 1, source_revision_id: snapshot, content_id: contentId, relation: "supports" },
    ]);
    expect(res.body.unavailable_source_revision_ids).toEqual([snapshot]);
    expect(res.body.markdown).toContain(`unavailable (the original ${contentId} was deleted)`);
    expect(res.body.markdown).not.toContain("Setup took two hours");
    expect(res.body.complete).toBe(false);
  });
});
