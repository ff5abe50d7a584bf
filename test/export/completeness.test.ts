import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runAdminCommand } from "../../src/governance/admin/commands.js";
import { bearer, comment, createEntityFor, signIn, source } from "../helpers/evidence.js";
import { createHarness, type Harness, randomId } from "../helpers/harness.js";

let h: Harness;
let token: string;
beforeAll(async () => {
  h = await createHarness();
  const sub = randomId("auditor-");
  token = await h.token(sub);
  await signIn(h, token);
  await runAdminCommand(h.deps, ["enable-raw-export", sub]);
});
afterAll(() => h.close());

const audit = (query: string) => h.http.get(`/agent/v1/export/completeness${query}`).set(bearer(token));
const ingest = (body: Record<string, unknown>) => h.http.post("/agent/v1/ingest/content").set(bearer(token)).send(body);
const cover = (body: Record<string, unknown>) => h.http.post("/agent/v1/ingest/coverage").set(bearer(token)).send(body);

/** What the enrichment worker leaves behind: an embedding, opinion units, enriched_at. */
async function enrich(ids: string[], withUnits = true) {
  for (const id of ids) {
    await h.deps.db.$executeRaw`
      INSERT INTO content_enrichment (content_id, entity_id, platform, created_at, embedding, enriched_at)
      SELECT id, entity_id, platform, created_at, ARRAY[0.1, 0.2]::real[], now() FROM content_store WHERE id = ${id}::uuid`;
    if (withUnits) {
      const row = await h.deps.db.content.findUniqueOrThrow({ where: { id } });
      await h.deps.db.opinionUnit.create({
        data: { contentId: id, entityId: row.entityId, startOffset: 0, endOffset: 5, text: row.content.slice(0, 5) },
      });
    }
  }
}

describe("GET /agent/v1/export/completeness", () => {
  it("counts text, URL and enrichment per platform and explains every gap", async () => {
    const entity = await createEntityFor(h, token, { name: "Audit Co", platforms: ["reddit", "github"] });
    const res = await ingest({
      entity_id: entity.id,
      sources: [
        source(1, { comments: [comment(1), comment(2, { url: "https://e.com/c2" })] }),
        source(2, { url: "", id: "x2" }),
        { platform: "hackernews", content: "   " },
      ],
    });
    const [s1, s2, hn, c1] = res.body.content_ids as string[];
    await enrich([s1 as string, c1 as string]);
    await h.deps.db.$executeRaw`
      INSERT INTO content_enrichment (content_id, entity_id, platform, created_at, embedding)
      SELECT id, entity_id, platform, created_at, ARRAY[0.3]::real[] FROM content_store WHERE id = ${s2}::uuid`;
    await cover({
      entity_id: entity.id,
      collector: "reddit",
      run_id: "r1",
      coverage_state: "sampled",
      finished_at: "2026-01-01T00:00:00Z",
    });

    const report = await audit(`?entity_id=${entity.id}`);
    expect(report.status).toBe(200);
    expect(report.body.comprehensive).toBe(false);
    expect(report.body.scope).toEqual({ workspace_ids: [entity.workspace_id], entity_ids: [entity.id], platform: null });
    const byPlatform = Object.fromEntries(report.body.platforms.map((p: { platform: string }) => [p.platform, p]));
    expect(Object.keys(byPlatform)).toEqual(["github", "hackernews", "reddit"]);
    expect(byPlatform.reddit).toMatchObject({
      rows: 4,
      sources: 2,
      comments: 2,
      with_text: 4,
      with_url: 2, // source 1 and comment 2
      with_embedding: 3,
      with_opinion_units: 2,
      with_enrichment: 2,
      coverage_state: "sampled",
      coverage_run_id: "r1",
      coverage_finished_at: "2026-01-01T00:00:00Z",
      coverage_proven: false,
      enrichment_complete: false,
    });
    expect(Date.parse(byPlatform.reddit.coverage_recorded_at)).toBeGreaterThan(0);
    expect(byPlatform.hackernews).toMatchObject({ rows: 1, with_text: 0, with_url: 0, with_enrichment: 0, coverage_state: null });
    expect(byPlatform.github).toMatchObject({ rows: 0, coverage_state: null, coverage_proven: false, enrichment_complete: true });
    expect(report.body.totals).toMatchObject({ rows: 5, with_text: 4, with_url: 2, with_enrichment: 2 });
    expect(hn).toBeDefined();

    const gaps = report.body.gaps as string[];
    expect(gaps).toContain(
      `github for Audit Co (${entity.id}): no coverage has been recorded, so nothing proves the collection is complete.`,
    );
    expect(
      gaps.some((g) => g.startsWith("reddit for Audit Co") && g.includes("'sampled'") && g.includes("only 'exhaustive' proves coverage")),
    ).toBe(true);
    expect(gaps).toContain(
      `reddit for Audit Co (${entity.id}): 2 of 4 rows are not enriched yet (1 without an embedding, 2 without opinion units).`,
    );
    expect(gaps).toContain(`reddit for Audit Co (${entity.id}): 2 of 4 rows have no URL.`);
    expect(gaps).toContain(`hackernews for Audit Co (${entity.id}): 1 of 1 row has no text.`);
  });

  it("is comprehensive only when every platform in scope is proven exhaustive and fully enriched", async () => {
    const entity = await createEntityFor(h, token, { name: "Done Co", platforms: ["reddit"] });
    const res = await ingest({ entity_id: entity.id, sources: [source(1), source(2)] });
    await cover({ entity_id: entity.id, collector: "reddit", run_id: "r1", coverage_state: "exhaustive" });
    expect((await audit(`?entity_id=${entity.id}`)).body.comprehensive).toBe(false); // not enriched yet

    await enrich([res.body.content_ids[0]]);
    // A row whose extraction ran and found no opinion unit counts as enriched.
    await enrich([res.body.content_ids[1]], false);
    const done = await audit(`?entity_id=${entity.id}`);
    expect(done.body.comprehensive).toBe(true);
    expect(done.body.entities[0]).toMatchObject({ entity_id: entity.id, comprehensive: true });
    expect(done.body.gaps).toEqual([]);

    // A later partial run replaces the proof.
    await cover({ entity_id: entity.id, collector: "reddit", run_id: "r2", coverage_state: "bounded" });
    expect((await audit(`?entity_id=${entity.id}`)).body.comprehensive).toBe(false);
    // Blocked is not proof either, but zero stored rows with exhaustive coverage is.
    await cover({ entity_id: entity.id, collector: "reddit", run_id: "r3", coverage_state: "exhaustive" });
    await cover({ entity_id: entity.id, collector: "linkedin", run_id: "r3", coverage_state: "blocked" });
    const blocked = await audit(`?entity_id=${entity.id}`);
    expect(blocked.body.comprehensive).toBe(false);
    expect(blocked.body.gaps.some((g: string) => g.startsWith("linkedin") && g.includes("could not reach"))).toBe(true);
    const onlyReddit = await audit(`?entity_id=${entity.id}&platform=reddit`);
    expect(onlyReddit.body.comprehensive).toBe(true);
    expect(onlyReddit.body.platforms.map((p: { platform: string }) => p.platform)).toEqual(["reddit"]);

    const empty = await createEntityFor(h, token, { name: "Nothing Co" });
    await cover({ entity_id: empty.id, collector: "hackernews", coverage_state: "exhaustive" });
    const provenEmpty = await audit(`?entity_id=${empty.id}`);
    expect(provenEmpty.body).toMatchObject({ comprehensive: true, totals: { rows: 0 }, gaps: [] });
  });

  it("scopes to a workspace or to everything visible, aggregating platforms by the weakest proof", async () => {
    const auditor = randomId("ws-auditor-");
    const t = await h.token(auditor);
    await signIn(h, t);
    await runAdminCommand(h.deps, ["enable-raw-export", auditor]);
    const a = await createEntityFor(h, t, { name: "A" });
    const b = await createEntityFor(h, t, { name: "B" });
    const post = (path: string, body: Record<string, unknown>) => h.http.post(path).set(bearer(t)).send(body);
    await post("/agent/v1/ingest/content", { entity_id: a.id, sources: [source(1)] });
    await post("/agent/v1/ingest/content", { entity_id: b.id, sources: [source(2), source(3)] });
    await post("/agent/v1/ingest/coverage", { entity_id: a.id, collector: "reddit", coverage_state: "exhaustive" });
    await post("/agent/v1/ingest/coverage", { entity_id: b.id, collector: "reddit", coverage_state: "sampled" });

    const all = await h.http.get("/agent/v1/export/completeness").set(bearer(t));
    expect(all.status).toBe(200);
    expect(all.body.scope.entity_ids).toEqual([a.id, b.id]);
    expect(all.body.platforms).toEqual([
      expect.objectContaining({ platform: "reddit", rows: 3, coverage_state: "sampled", coverage_proven: false }),
    ]);
    const ws = await h.http.get(`/agent/v1/export/completeness?workspace_id=${a.workspace_id}&platform=reddit`).set(bearer(t));
    expect(ws.body.entities.map((e: { comprehensive: boolean }) => e.comprehensive)).toEqual([false, false]);

    const mismatch = await h.http
      .get(`/agent/v1/export/completeness?entity_id=${a.id}&workspace_id=00000000-0000-4000-8000-000000000000`)
      .set(bearer(t));
    expect(mismatch.status).toBe(404);
  });

  it("is never comprehensive for an empty scope", async () => {
    const sub = randomId("empty-auditor-");
    const t = await h.token(sub);
    await signIn(h, t);
    await runAdminCommand(h.deps, ["enable-raw-export", sub]);
    const res = await h.http.get("/agent/v1/export/completeness").set(bearer(t));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      comprehensive: false,
      platforms: [],
      entities: [],
      gaps: ["The scope holds no entities, so there is nothing to audit."],
    });
    const bare = await createEntityFor(h, t, { name: "Bare" });
    const one = await h.http.get(`/agent/v1/export/completeness?entity_id=${bare.id}`).set(bearer(t));
    expect(one.body.comprehensive).toBe(false);
    expect(one.body.gaps).toEqual([`Bare (${bare.id}): no platform is in scope: none is declared, stored or covered.`]);
  });

  it("validates its query parameters", async () => {
    for (const [query, loc] of [
      ["entity_id=abc", "entity_id"],
      ["workspace_id=abc", "workspace_id"],
      ["platform=myspace", "platform"],
    ] as const) {
      const res = await audit(`?${query}`);
      expect(res.status).toBe(422);
      expect(res.body.detail[0].loc).toEqual(["query", loc]);
    }
  });
});
