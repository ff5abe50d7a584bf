import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHarness, type Harness } from "../helpers/harness.js";
import { auth, createInsight, createTeam, insightBody, reviseInsight, TEXTS, type Team } from "./support.js";

let h: Harness;
let team: Team;
const ids: Record<string, string> = {};

beforeAll(async () => {
  h = await createHarness();
  team = await createTeam(h);
  for (const [key, title, tags] of [
    ["b", "Beta: exports break", ["export", "reliability"]],
    ["a", "Alpha: pricing confuses", ["pricing"]],
    ["c", "Gamma: the editor is fast", ["editor"]],
  ] as const) {
    const res = await createInsight(h, team.token, insightBody(team, { title, tags }));
    expect(res.status).toBe(201);
    ids[key] = res.body.record.id;
  }
  // Revising Beta makes it the most recently updated.
  expect(
    (
      await reviseInsight(
        h,
        team.token,
        ids.b as string,
        insightBody(team, { expected_revision: 1, title: "Beta: exports break often", tags: ["export"] }),
      )
    ).status,
  ).toBe(200);
});
afterAll(async () => {
  await h?.close();
});

const get = (path: string) => h.http.get(path).set(auth(team.token));
const list = (query: string) => get(`/agent/v1/knowledge/insights?entity_id=${team.entityId}&${query}`);
const titles = (body: { insights: { title: string }[] }) => body.insights.map((r) => r.title);

describe("listing current records", () => {
  it("sorts by updated_at (default, newest first), created_at and title, in either order", async () => {
    const byUpdated = await list("");
    expect(byUpdated.status).toBe(200);
    expect(titles(byUpdated.body)).toEqual(["Beta: exports break often", "Gamma: the editor is fast", "Alpha: pricing confuses"]);
    expect(byUpdated.body).toMatchObject({ count: 3, total: 3, limit: 20, offset: 0, next_offset: null });
    expect(titles((await list("sort=created_at&order=asc")).body)).toEqual([
      "Beta: exports break often",
      "Alpha: pricing confuses",
      "Gamma: the editor is fast",
    ]);
    expect(titles((await list("sort=title&order=asc")).body)).toEqual([
      "Alpha: pricing confuses",
      "Beta: exports break often",
      "Gamma: the editor is fast",
    ]);
  });

  it("filters by a literal title substring and by an exact tag, and answers the current revision without evidence", async () => {
    const query = await list("query=EXPORTS%20BREAK");
    expect(titles(query.body)).toEqual(["Beta: exports break often"]);
    expect(query.body.insights[0]).toMatchObject({ id: ids.b, revision: 2, tags: ["export"], evidence_count: 1 });
    expect(query.body.insights[0].evidence).toBeUndefined();
    expect(titles((await list("query=%25")).body)).toEqual([]);
    expect(titles((await list("tag=pricing")).body)).toEqual(["Alpha: pricing confuses"]);
    // Beta's current revision no longer has the tag.
    expect(titles((await list("tag=reliability")).body)).toEqual([]);
  });

  it("pages with limit and next_offset; limit is at most 100", async () => {
    const first = await list("limit=2");
    expect(first.body).toMatchObject({ count: 2, next_offset: 2 });
    const second = await list("limit=2&offset=2");
    expect(second.body).toMatchObject({ count: 1, next_offset: null });
    const tooMany = await list("limit=101");
    expect(tooMany.status).toBe(422);
    expect(tooMany.body.detail[0].loc).toEqual(["query", "limit"]);
  });
});

describe("reading one record", () => {
  it("answers the record, its sources and resolved evidence; include_evidence=false is compact", async () => {
    const full = await get(`/agent/v1/knowledge/insights/${ids.a}?entity_id=${team.entityId}`);
    expect(full.status).toBe(200);
    const evidence = full.body.record.evidence[0];
    expect(full.body.sources).toEqual([
      expect.objectContaining({
        source_revision_id: evidence.source_revision_id,
        content_id: team.content.pricing,
        available: true,
        text_kind: "original",
        platform: "reddit",
        author: "author-pricing",
        text_length: Array.from(TEXTS.pricing).length,
      }),
    ]);
    expect(full.body.resolved_evidence).toEqual([
      {
        ...evidence,
        position: 0,
        available: true,
        source_text_kind: "original",
        allowed_relations: ["supports", "contradicts", "context"],
        span: { start: evidence.start, end: evidence.end, text: evidence.quote },
      },
    ]);
    const compact = await get(`/agent/v1/knowledge/insights/${ids.a}?entity_id=${team.entityId}&include_evidence=false`);
    expect(compact.body).toEqual({ record: full.body.record, current_revision: 1, unavailable_source_ids: [] });
  });

  it("answers an exact historical revision, and 404 for one that does not exist", async () => {
    const first = await get(`/agent/v1/knowledge/insights/${ids.b}?entity_id=${team.entityId}&revision=1`);
    expect(first.status).toBe(200);
    expect(first.body.record).toMatchObject({ revision: 1, title: "Beta: exports break", tags: ["export", "reliability"] });
    expect(first.body.current_revision).toBe(2);
    const missing = await get(`/agent/v1/knowledge/insights/${ids.b}?entity_id=${team.entityId}&revision=3`);
    expect(missing.status).toBe(404);
    const zero = await get(`/agent/v1/knowledge/insights/${ids.b}?entity_id=${team.entityId}&revision=0`);
    expect(zero.status).toBe(422);
  });
});

describe("originals", () => {
  it("lists the scope's originals with offset paging and reads one in full", async () => {
    const page = await get(`/agent/v1/knowledge/content?entity_id=${team.entityId}&limit=2`);
    expect(page.status).toBe(200);
    expect(page.body).toMatchObject({ count: 2, total: 3, limit: 2, offset: 0, next_offset: 2 });
    const rest = await get(`/agent/v1/knowledge/content?entity_id=${team.entityId}&limit=2&offset=2`);
    expect(rest.body).toMatchObject({ count: 1, next_offset: null });
    const all = [...page.body.content, ...rest.body.content].map((c: { content_id: string }) => c.content_id);
    expect(new Set(all)).toEqual(new Set(Object.values(team.content)));
    expect(page.body.content[0]).toMatchObject({ entity_id: team.entityId, text_kind: "original", platform: "reddit" });
    expect(page.body.content[0].text).toBeUndefined();

    const one = await get(`/agent/v1/knowledge/content/${team.content.pricing}?entity_id=${team.entityId}`);
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({
      content_id: team.content.pricing,
      text: TEXTS.pricing,
      text_length: Array.from(TEXTS.pricing).length,
    });
    // A project lists every entity's originals.
    const project = await get(`/agent/v1/knowledge/content?project_id=${team.projectId}&limit=100`);
    expect(project.body.total).toBe(4);
  });
});
