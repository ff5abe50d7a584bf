import type { Job } from "bullmq";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { collectionProcessor } from "../../src/intake/collection/runner.js";
import { NEVER_CANCELLED } from "../../src/jobs/cancellation.js";
import type { AppDeps } from "../../src/platform/deps.js";
import { type Fake, hackernewsFake, hnStories, redditFake, redditPosts } from "../collection/fakes.js";
import { bearer, contentRows, coverageOf, createJob, type JobStatus, newEntity, pollJob, until } from "../collection/support.js";
import { createHarness, type Harness } from "../helpers/harness.js";
import { gate, trackEnds } from "./support.js";

/**
 * What a poll says of each platform once its collection job is cancelled. The HN fake answers
 * page 0 and holds page 1 of a search; the reddit fake holds its first page, so one platform is
 * `running` (a page stored) and the other has written nothing yet. The cancel itself settles
 * both `cancelled` with a `finished_at`, and nothing the worker writes afterwards moves them
 * back: neither the worker that aborts at its next checkpoint, nor one that has not yet
 * noticed the cancel and gets its upstream's answer afterwards.
 */
const PAGE = 3;
let h: Harness;
let hn: Fake;
let reddit: Fake;
let tracker: ReturnType<typeof trackEnds>;
const hnHeld = new Map<string, ReturnType<typeof gate>>();
const redditHeld = gate();

/** Jobs whose objective starts with this run with a watch that never fires (a worker that has not yet seen the cancel). */
const DEAF = "Deaf:";

beforeAll(async () => {
  hn = await hackernewsFake((q) => hnStories(9, q.split(" ")[0]!.toLowerCase()));
  hn.intercept(async (req) => {
    const name = req.query.get("query")?.split(" ")[0] ?? "";
    if (req.path === "/api/v1/search" && req.query.get("page") === "1") await hnHeld.get(name)?.wait();
    return undefined;
  });
  reddit = await redditFake(() => redditPosts(4));
  reddit.intercept(async () => {
    await redditHeld.wait();
    return undefined;
  });
  h = await createHarness({
    HACKERNEWS_API_URL: `${hn.url}/api/v1`,
    REDDIT_API_URL: reddit.url,
    COLLECTOR_PAGE_SIZE: String(PAGE),
    COLLECTOR_MAX_PAGES: "5",
    COLLECTOR_MAX_COMMENTS: "0",
    COLLECTOR_REQUESTS_PER_SECOND: "1000",
    COLLECTOR_TIMEOUT_MS: "60000",
    COLLECTOR_RETRIES: "0",
  });
  const watching = collectionProcessor();
  const deaf = collectionProcessor({ cancel: NEVER_CANCELLED });
  const workers = h.startWorkers(
    {
      "collection.run.v1": async (payload: { jobId: string }, ctx: { deps: AppDeps; job: Job }) => {
        const row = await ctx.deps.db.collectionJob.findUnique({ where: { id: payload.jobId }, select: { objective: true } });
        return (row?.objective.startsWith(DEAF) ? deaf : watching)(payload, ctx);
      },
    },
    2,
  );
  tracker = trackEnds(workers);
});
afterAll(async () => {
  for (const held of hnHeld.values()) held.open();
  redditHeld.open();
  await h?.close();
  await hn?.close();
  await reddit?.close();
});

const cancelPath = (jobId: string) => `/agent/v1/ingest/collection/jobs/${jobId}/cancel`;

/** A job whose `hackernews` has stored page 0 and waits on page 1 (and whose `reddit`, if asked, waits on its first page). */
async function startHeldJob(token: string, name: string, objective: string, platforms: string[]) {
  const held = gate();
  hnHeld.set(name, held);
  const entity = await newEntity(h, token, { name });
  const created = await createJob(h, token, { entity_id: entity.id, objective, platforms, collection_only: true });
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  const jobId = created.body.job_id as string;
  await pollJob(h, token, jobId, (s) => s.progress.hackernews?.pages === 1);
  await until(async () => held.state.waiting > 0);
  if (platforms.includes("reddit")) await until(async () => redditHeld.state.waiting > 0);
  const row = await h.deps.db.collectionJob.findUniqueOrThrow({ where: { id: jobId } });
  expect(row.status).toBe("running");
  return { entity, jobId, queueJobId: row.queueJobId, held };
}

function expectCancelledPlatform(p: (JobStatus["progress"][string] & { finished_at?: string | null }) | undefined) {
  expect(p?.status).toBe("cancelled");
  expect(p?.finished_at).toEqual(expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/));
}

describe("the platforms of a cancelled collection job", { timeout: 30_000 }, () => {
  it("are settled `cancelled` by the cancel itself, and stay so after the worker stops", async () => {
    const token = await h.token();
    const { entity, jobId, queueJobId } = await startHeldJob(token, "Settle", "What do developers say?", ["hackernews", "reddit"]);
    const before = await pollJob(h, token, jobId, () => true);
    expect(before.progress.hackernews?.status).toBe("running");
    expect(before.progress.reddit?.status).toBe("pending");

    const res = await h.http.post(cancelPath(jobId)).set(bearer(token));
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    // The cancel's own answer already says so: the platforms settled in the cancelling statement.
    expect(res.body.status).toBe("cancelled");
    expectCancelledPlatform(res.body.progress.hackernews);
    expectCancelledPlatform(res.body.progress.reddit);
    expect(res.body.progress.hackernews).toMatchObject({ pages: 1, stored: PAGE });

    const end = await tracker.endOf(queueJobId, 5000);
    expect(end.value).toMatchObject({ status: "cancelled" });
    const after = await pollJob(h, token, jobId, () => true);
    expect(after.status).toBe("cancelled");
    expect((after as JobStatus & { finished_at: string | null }).finished_at).not.toBeNull();
    // The worker's last write kept its counts and cursor; the status and finish time are the cancel's.
    for (const platform of ["hackernews", "reddit"]) {
      const { status, finished_at, pages, stored, cursor } = res.body.progress[platform];
      expect(after.progress[platform]).toMatchObject({ status, finished_at, pages, stored, cursor });
    }
    expect(await contentRows(h, entity.id)).toHaveLength(PAGE);
  });

  it("stay `cancelled` when a worker that has not noticed the cancel gets its upstream's answer afterwards", async () => {
    const token = await h.token();
    const { entity, jobId, queueJobId, held } = await startHeldJob(token, "Late", `${DEAF} what do developers say?`, ["hackernews"]);
    const res = await h.http.post(cancelPath(jobId)).set(bearer(token));
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expectCancelledPlatform(res.body.progress.hackernews);

    // The held page now answers; the worker learns of the cancel only from its own writes.
    held.open();
    const end = await tracker.endOf(queueJobId, 10_000);
    expect(end.value).toMatchObject({ status: "cancelled" });

    const after = await pollJob(h, token, jobId, () => true);
    expect(after.status).toBe("cancelled");
    expectCancelledPlatform(after.progress.hackernews);
    expect((after.progress.hackernews as { finished_at?: string }).finished_at).toBe(res.body.progress.hackernews.finished_at);
    expect(after.progress.hackernews?.coverage_state).toBeNull();
    // Nothing was stored after the cancel, and no coverage was recorded for the cancelled run.
    expect(await contentRows(h, entity.id)).toHaveLength(PAGE);
    expect(after.progress.hackernews).toMatchObject({ pages: 1, stored: PAGE });
    expect(await coverageOf(h, entity.id, jobId)).toEqual({});
  });
});
