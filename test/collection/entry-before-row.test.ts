import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { collectionProcessor } from "../../src/intake/collection/runner.js";
import { createHarness, type Harness } from "../helpers/harness.js";
import { type Fake, hackernewsFake, hnStories } from "./fakes.js";
import { createJob, newEntity, pollJob, until } from "./support.js";

/**
 * A queue entry that arrives before its row (an enqueue that reached Redis although its create saw an
 * error and removed the row, then a retry of that create): the worker does not wait for the row
 * in-process; the attempt fails and BullMQ retries it with the kind's backoff, and the retry runs the
 * row once it is there.
 */
let h: Harness;
let token: string;
let hn: Fake;

beforeAll(async () => {
  hn = await hackernewsFake((q) => (q.startsWith("Lateco") ? hnStories(2, "r") : []));
  h = await createHarness({ HACKERNEWS_API_URL: `${hn.url}/api/v1`, COLLECTOR_REQUESTS_PER_SECOND: "1000" });
  token = await h.token();
});
afterAll(async () => {
  await h?.close();
  await hn?.close();
});

describe("a collection job whose queue entry comes before its row", () => {
  it("fails the attempt without holding a worker, and the retry runs the row that arrived meanwhile", async () => {
    const entity = await newEntity(h, token, { name: "Lateco" });
    const created = await createJob(h, token, {
      entity_id: entity.id,
      objective: "A row that comes late",
      platforms: ["hackernews"],
      collection_only: true,
    });
    const jobId = created.body.job_id as string;
    // The create's undo: its row goes, its queue entry stays.
    const row = await h.deps.db.collectionJob.findUniqueOrThrow({ where: { id: jobId } });
    await h.deps.db.collectionJob.delete({ where: { id: jobId } });

    h.startWorkers({ "collection.run.v1": collectionProcessor() });
    const queue = h.deps.queues.get("collection");
    const first = await until(async () => {
      const job = await queue.getJob(row.queueJobId);
      return job && job.attemptsMade >= 1 ? job : undefined;
    });
    expect(first.failedReason).toMatch(/has no row \(yet\)/);
    // The attempt ended at once: no worker slot waited for the row (an in-process wait held it 5 s).
    expect((first.finishedOn ?? 0) - (first.processedOn ?? 0)).toBeLessThan(2000);
    // Retried later, not failed for good.
    expect(await queue.getJobState(row.queueJobId)).toBe("delayed");

    // The retried create writes the row again, under the same queue job id.
    await h.deps.db.collectionJob.create({ data: { ...row, progress: row.progress ?? {} } as never });
    const done = await pollJob(h, token, jobId);
    expect(done).toMatchObject({ status: "completed", coverage: { hackernews: "exhaustive" } });
    expect(done.counts.stored).toBeGreaterThan(0);
    expect((await queue.getJob(row.queueJobId))?.attemptsMade).toBeGreaterThanOrEqual(1);
  });
});
