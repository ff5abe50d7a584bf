import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { latestCoverageByPlatform } from "../../src/intake/coverage/service.js";
import { bearer, createEntityFor, createKeyFor } from "../helpers/evidence.js";
import { createHarness, type Harness } from "../helpers/harness.js";

let h: Harness;
let token: string;
let entityId: string;
beforeAll(async () => {
  h = await createHarness();
  token = await h.token();
  entityId = (await createEntityFor(h, token)).id;
});
afterAll(() => h.close());

const post = (body: Record<string, unknown>, auth: Record<string, string> = bearer(token)) =>
  h.http.post("/agent/v1/ingest/coverage").set(auth).send(body);

const targetsOf = (runId: string) => h.deps.db.coverageTarget.findMany({ where: { record: { runId } }, orderBy: { position: "asc" } });

describe("POST /agent/v1/ingest/coverage", () => {
  it("stores the record and its targets, with the spec's defaults", async () => {
    const res = await post({
      entity_id: entityId,
      coverage_state: "bounded",
      collector: "reddit",
      collection_scope: "subreddit:acme",
      run_id: "run-a",
      query: "acme onboarding",
      started_at: "2026-01-01T00:00:00Z",
      finished_at: "2026-01-01T00:05:00+01:00",
      totals: { found: 12, stored: 3 },
      notes: "two pages",
      targets: [
        { target: "r/acme", items_found: 12, items_stored: 3, reached_end: true, cursor_end: "t3_x", metadata: { pages: 2 } },
        {
          target: "r/widgets",
          target_type: "community",
          role: "competitor",
          status: "error",
          error: "403",
          source_group: "g",
          sender_type: "user",
        },
      ],
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      status: "recorded",
      entity_id: entityId,
      run_id: "run-a",
      coverage_state: "bounded",
      targets_recorded: 2,
      removed_after: { rows: 0, deleted: 0, author_erased: 0, retention: 0, last_removed_at: null },
    });

    const record = await h.deps.db.coverageRecord.findUniqueOrThrow({
      where: { entityId_runId_collector: { entityId, runId: "run-a", collector: "reddit" } },
    });
    expect(record).toMatchObject({
      collectionScope: "subreddit:acme",
      coverageState: "bounded",
      query: "acme onboarding",
      startedAt: "2026-01-01T00:00:00Z",
      finishedAt: "2026-01-01T00:05:00+01:00",
      totals: { found: 12, stored: 3 },
      notes: "two pages",
    });
    const targets = await targetsOf("run-a");
    expect(targets.map((t) => t.target)).toEqual(["r/acme", "r/widgets"]);
    expect(targets[0]).toMatchObject({
      targetType: "account",
      role: "unknown",
      status: "unknown",
      itemsFound: 12,
      itemsStored: 3,
      reachedEnd: true,
      cursorEnd: "t3_x",
      cursorStart: null,
      error: null,
      metadata: { pages: 2 },
    });
    expect(targets[1]).toMatchObject({ targetType: "community", role: "competitor", status: "error", error: "403", itemsFound: 0 });

    const minimal = await post({ entity_id: entityId, coverage_state: "unknown" });
    expect(minimal.status).toBe(200);
    expect(minimal.body.run_id).toMatch(/^[0-9a-f-]{36}$/);
    const stored = await h.deps.db.coverageRecord.findFirstOrThrow({ where: { runId: minimal.body.run_id } });
    expect(stored).toMatchObject({ collector: "unknown", collectionScope: "unknown", totals: {}, query: null });
    const another = await post({ entity_id: entityId, coverage_state: "unknown" });
    expect(another.body.run_id).not.toBe(minimal.body.run_id);
  });

  it("is idempotent per (entity, run, collector): posting the run again replaces it and its targets", async () => {
    const body = {
      entity_id: entityId,
      collector: "github",
      run_id: "run-b",
      coverage_state: "sampled",
      targets: [{ target: "a" }, { target: "b" }],
    };
    expect((await post(body)).body.targets_recorded).toBe(2);
    const again = await post({ ...body, coverage_state: "exhaustive", targets: [{ target: "c" }] });
    expect(again.body).toMatchObject({ run_id: "run-b", coverage_state: "exhaustive", targets_recorded: 1 });
    expect(await h.deps.db.coverageRecord.count({ where: { entityId, runId: "run-b" } })).toBe(1);
    expect((await targetsOf("run-b")).map((t) => t.target)).toEqual(["c"]);

    // Racing posts of the same run end with one record and one target list.
    await Promise.all(Array.from({ length: 6 }, (_, i) => post({ ...body, targets: [{ target: `t${i}` }, { target: `u${i}` }] })));
    expect(await h.deps.db.coverageRecord.count({ where: { entityId, runId: "run-b" } })).toBe(1);
    const targets = await targetsOf("run-b");
    expect(targets).toHaveLength(2);
    expect(targets[0]?.target.slice(1)).toBe(targets[1]?.target.slice(1));

    // The same run id from another collector is another record.
    await post({ ...body, collector: "hackernews" });
    expect(await h.deps.db.coverageRecord.count({ where: { entityId, runId: "run-b" } })).toBe(2);
  });

  it("proves exhaustive or blocked coverage for a run that stored no rows, and reports the latest per platform", async () => {
    const entity = await createEntityFor(h, token, { name: "Empty Co" });
    await post({ entity_id: entity.id, collector: "reddit", run_id: "r1", coverage_state: "sampled" });
    await post({ entity_id: entity.id, collector: "reddit", run_id: "r2", coverage_state: "exhaustive", totals: { stored: 0 } });
    await post({ entity_id: entity.id, collector: "linkedin", run_id: "r3", coverage_state: "blocked", notes: "login required" });
    expect(await h.deps.db.content.count({ where: { entityId: entity.id } })).toBe(0);

    const latest = await latestCoverageByPlatform(h.deps.db, { id: entity.id });
    expect(latest.get("reddit")).toMatchObject({ coverageState: "exhaustive", runId: "r2" });
    expect(latest.get("linkedin")).toMatchObject({ coverageState: "blocked", runId: "r3" });
    expect([...latest.keys()].sort()).toEqual(["linkedin", "reddit"]);

    // Re-posting an older run makes it the latest record.
    await post({ entity_id: entity.id, collector: "reddit", run_id: "r1", coverage_state: "bounded" });
    expect((await latestCoverageByPlatform(h.deps.db, { id: entity.id })).get("reddit")).toMatchObject({
      coverageState: "bounded",
      runId: "r1",
    });
  });

  it("answers 404 for an entity the caller cannot see, and checks credentials", async () => {
    const stranger = await h.token();
    expect((await post({ entity_id: entityId, coverage_state: "exhaustive" }, bearer(stranger))).status).toBe(404);
    expect((await post({ entity_id: "abc", coverage_state: "exhaustive" })).status).toBe(404);
    const ingestKey = await createKeyFor(h, token, ["ingest"]);
    const exportKey = await createKeyFor(h, token, ["export"]);
    expect((await post({ entity_id: entityId, coverage_state: "exhaustive" }, bearer(ingestKey.raw_key))).status).toBe(200);
    expect((await post({ entity_id: entityId, coverage_state: "exhaustive" }, bearer(exportKey.raw_key))).status).toBe(403);
    expect((await h.http.post("/agent/v1/ingest/coverage").send({ entity_id: entityId, coverage_state: "exhaustive" })).status).toBe(401);
  });
});
