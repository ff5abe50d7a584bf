import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { collectionProcessor } from "../../src/intake/collection/runner.js";
import { startWorkers, type WorkerHandles } from "../../workers/runtime.js";
import { createHarness, type Harness } from "../helpers/harness.js";
import { type Fake, hackernewsFake, hnStories } from "./fakes.js";
import { contentRows, coverageOf, createJob, newEntity, pollJob, until } from "./support.js";

/**
 * A worker killed mid-job: its lock lapses, another worker picks the stalled job up and
 * resumes from the stored cursor, and the killed run (still alive in this process, as a
 * paused or partitioned worker would be) is fenced off when it wakes up.
 */
const stories = hnStories(15, "k");
let h: Harness;
let token: string;
let hn: Fake;
let releaseHeld: () => void = () => {};
let held = false;
const outcomes: string[] = [];

const processor = collectionProcessor();
const tracked: typeof processor = Object.assign(
  async (...args: Parameters<typeof processor>) => {
    try {
      const result = await processor(...args);
      outcomes.push("completed");
      return result;
    } catch (err) {
      outcomes.push((err as Error).name);
      throw err;
    }
  },
  { onLastFailure: processor.onLastFailure },
);
const fastStall = { concurrency: 1, lockDuration: 1000, stalledInterval: 300 };
const handles: WorkerHandles[] = [];

beforeAll(async () => {
  hn = await hackernewsFake((q) => (q.startsWith("Resumable") ? stories : []));
  // The first request for page 1 is held until the test releases it.
  hn.intercept(async (req) => {
    if (req.path !== "/api/v1/search" || req.query.get("page") !== "1" || held) return undefined;
    held = true;
    await new Promise<void>((resolve) => {
      releaseHeld = resolve;
    });
    return undefined;
  });
  h = await createHarness({
    HACKERNEWS_API_URL: `${hn.url}/api/v1`,
    COLLECTOR_PAGE_SIZE: "5",
    COLLECTOR_MAX_PAGES: "5",
    COLLECTOR_MAX_COMMENTS: "0",
    COLLECTOR_REQUESTS_PER_SECOND: "1000",
    COLLECTOR_TIMEOUT_MS: "30000",
  });
  token = await h.token();
});
afterAll(async () => {
  releaseHeld();
  await Promise.allSettled(handles.map((w) => w.close()));
  await h?.close();
  await hn?.close();
});

describe("a collection job whose worker dies mid-way", () => {
  it("is resumed by another worker from the stored cursor and finishes without duplicate rows", async () => {
    const entity = await newEntity(h, token, { name: "Resumable" });
    const first = startWorkers(h.deps, { "collection.run.v1": tracked }, fastStall);
    handles.push(first);
    const created = await createJob(h, token, {
      entity_id: entity.id,
      objective: "Resume me please",
      platforms: ["hackernews"],
      collection_only: true,
    });
    expect(created.status).toBe(200);

    // The first worker stored page 0 and is now waiting on page 1.
    await until(async () => held);
    const midway = await pollJob(h, token, created.body.job_id, (s) => s.progress.hackernews?.pages === 1);
    expect(midway.status).toBe("running");
    expect((await contentRows(h, entity.id)).length).toBe(5);

    // Kill it: no graceful finish, no more lock renewals.
    await Promise.all(first.workers.map((w) => w.close(true)));
    first.connection.disconnect();

    const second = startWorkers(h.deps, { "collection.run.v1": tracked }, fastStall);
    handles.push(second);
    const done = await pollJob(h, token, created.body.job_id);
    expect(done.status).toBe("completed");
    expect(done.attempts).toBe(2);

    // The killed run wakes up with page 1 and is refused before it stores anything.
    releaseHeld();
    await until(async () => outcomes.includes("FenceLost"));

    const rows = await contentRows(h, entity.id);
    expect(rows).toHaveLength(15);
    expect(new Set(rows.map((r) => r.externalId)).size).toBe(15);
    const pages = hn.requests.filter((r) => r.path === "/api/v1/search").map((r) => r.query.get("page"));
    // Page 0 once (resumed, not restarted); page 1 by the killed run and by the resumed one.
    expect(pages).toEqual(["0", "1", "1", "2"]);

    const final = await pollJob(h, token, created.body.job_id);
    expect(final.progress.hackernews).toMatchObject({
      status: "completed",
      coverage_state: "exhaustive",
      pages: 3,
      found: 15,
      stored: 15,
      inserted: 15,
      deduplicated: 0,
    });
    expect((await coverageOf(h, entity.id, created.body.job_id)).hackernews?.coverageState).toBe("exhaustive");
  });
});
