import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { collectionProcessor } from "../../src/intake/collection/runner.js";
import { type Fake, hackernewsFake, hnStories } from "../collection/fakes.js";
import { contentRows, createJob, pollJob } from "../collection/support.js";
import { createHarness, type Harness } from "../helpers/harness.js";
import { auth, createTeam, type Team } from "./support.js";

/**
 * A collector does not bring an erased author back: the hackernews collector, run by the real
 * worker against a local server in Algolia's format, stores through the ingest service, which skips
 * the erased author's story (with its comments) and the erased commenter's reply.
 */
let h: Harness;
let hn: Fake;
let team: Team;

beforeAll(async () => {
  hn = await hackernewsFake((q) => (q.includes("Erasedco") ? hnStories(3, "e") : []));
  h = await createHarness({
    HACKERNEWS_API_URL: `${hn.url}/api/v1`,
    COLLECTOR_PAGE_SIZE: "5",
    COLLECTOR_MAX_PAGES: "2",
    COLLECTOR_REQUESTS_PER_SECOND: "1000",
    COLLECTOR_ALLOW_PRIVATE_URLS: "true",
  });
  h.startWorkers({ "collection.run.v1": collectionProcessor() });
  team = await createTeam(h, "Erasedco");
});
afterAll(async () => {
  await h?.close();
  await hn?.close();
});

describe("a collection job after erasures", () => {
  it("skips the erased authors' items and stores the rest", async () => {
    for (const author of ["hnuser0", "R2"]) {
      const res = await h.http
        .post(`/api/workspaces/${team.workspaceId}/erasures`)
        .set(auth(team.token))
        .send({ platform: "hackernews", author });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.progress).toMatchObject({ originals_matched: 0, rows_deleted: 0 });
    }
    const created = await createJob(h, team.token, {
      entity_id: team.entityId,
      objective: "What do people say about Erasedco?",
      platforms: ["hackernews"],
      collection_only: true,
      idempotency_key: "erased-authors-0001",
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const status = await pollJob(h, team.token, created.body.job_id);
    expect(status.status).toBe("completed");
    // Seven items found (three stories, four comments); skipped: the erased author's story with its comment and the
    // reply below it, and the erased commenter's reply to another story.
    expect(status.progress.hackernews).toMatchObject({ found: 7, stored: 3, inserted: 3 });

    const rows = await contentRows(h, team.entityId, "hackernews");
    expect(rows.map((r) => r.externalId).sort()).toEqual(["5020", "e1001", "e1002"]);
    const authors = await h.deps.db.content.findMany({ where: { entityId: team.entityId }, select: { author: true } });
    expect(authors.map((a) => a.author).sort()).toEqual(["c2", "hnuser1", "hnuser2"]);
  }, 30_000);
});
