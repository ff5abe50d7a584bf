import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { collectionProcessor } from "../../src/intake/collection/runner.js";
import type { WorkerHandles } from "../../workers/runtime.js";
import { type Fake, hackernewsFake, hnStories } from "../collection/fakes.js";
import { bearer, contentRows, createJob, newEntity, pollJob, until } from "../collection/support.js";
import { createHarness, type Harness } from "../helpers/harness.js";
import { expectEndedConflict, gate, timeCancel, trackEnds } from "./support.js";

/**
 * Cancelling collection jobs on real PostgreSQL, Redis and a BullMQ worker. The HN fake
 * answers page 0 of a search and holds page 1 until the test opens the gate, so the job
 * sits mid-run; the cancel must stop it within 2 s (the held call is aborted), keep the
 * rows of page 0, and make no further upstream request.
 */
const PAGE = 3;
let h: Harness;
let hn: Fake;
let workers: WorkerHandles;
let tracker: ReturnType<typeof trackEnds>;
const held = gate();

beforeAll(async () => {
  hn = await hackernewsFake((q) => (q.startsWith("Quick") ? hnStories(2, "quick") : hnStories(9, q.split(" ")[0]!.toLowerCase())));
  // Page 1 of every search but "Quick…" waits until the gate opens.
  hn.intercept(async (req) => {
    if (req.path === "/api/v1/search" && req.query.get("page") === "1") await held.wait();
    return undefined;
  });
  h = await createHarness({
    HACKERNEWS_API_URL: `${hn.url}/api/v1`,
    COLLECTOR_PAGE_SIZE: String(PAGE),
    COLLECTOR_MAX_PAGES: "5",
    COLLECTOR_MAX_COMMENTS: "0",
    COLLECTOR_REQUESTS_PER_SECOND: "1000",
    COLLECTOR_TIMEOUT_MS: "30000",
  });
  workers = h.startWorkers({ "collection.run.v1": collectionProcessor() }, 2);
  tracker = trackEnds(workers);
});
afterAll(async () => {
  held.open();
  await h?.close();
  await hn?.close();
});

const cancelPath = (jobId: string, route: "collection" | "research" = "collection") => `/agent/v1/ingest/${route}/jobs/${jobId}/cancel`;

async function startHeldJob(token: string, name: string) {
  const entity = await newEntity(h, token, { name });
  const created = await createJob(h, token, {
    entity_id: entity.id,
    objective: "What do developers say?",
    platforms: ["hackernews"],
    collection_only: true,
  });
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  const jobId = created.body.job_id as string;
  // Page 0 stored; the worker now waits on page 1.
  await pollJob(h, token, jobId, (s) => s.progress.hackernews?.pages === 1);
  await until(async () => hn.requests.some((r) => r.query.get("page") === "1" && r.query.get("query")?.startsWith(name)));
  const row = await h.deps.db.collectionJob.findUniqueOrThrow({ where: { id: jobId } });
  expect(row.status).toBe("running");
  return { entity, jobId, queueJobId: row.queueJobId };
}

describe("cancelling a collection job", { timeout: 30_000 }, () => {
  it("stops a running job mid-run within 2 s, keeps page 0's rows and makes no more upstream requests", async () => {
    const token = await h.token();
    const { entity, jobId, queueJobId } = await startHeldJob(token, "Midrun");
    expect(await contentRows(h, entity.id)).toHaveLength(PAGE);

    const { res, latencyMs, startedAt } = await timeCancel(
      () => h.http.post(cancelPath(jobId)).set(bearer(token)),
      async () => (await h.deps.db.collectionJob.findUniqueOrThrow({ where: { id: jobId } })).status === "cancelled",
    );
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ job_id: jobId, status: "cancelled" });
    expect(latencyMs).toBeLessThan(2000);

    // The worker itself stops within 2 s: the held call is aborted, not waited out.
    const end = await tracker.endOf(queueJobId, 5000);
    expect(end.outcome).toBe("completed");
    expect(end.value).toMatchObject({ status: "cancelled" });
    expect(end.at - startedAt).toBeLessThan(2000);

    const rows = await contentRows(h, entity.id);
    expect(rows).toHaveLength(PAGE);
    expect(rows.every((r) => r.collectionRunId === jobId)).toBe(true);
    expect(hn.requests.filter((r) => r.at > startedAt && r.query.get("query")?.startsWith("Midrun"))).toEqual([]);

    const status = await pollJob(h, token, jobId, () => true);
    expect(status.status).toBe("cancelled");
    expect(status.stalled_reason).toBeNull();
    expect(status.progress.hackernews).toMatchObject({ pages: 1, stored: PAGE });
    const row = await h.deps.db.collectionJob.findUniqueOrThrow({ where: { id: jobId } });
    expect(row.finishedAt).not.toBeNull();
    expect(row.analysisId).toBeNull();
  });

  it("answers a second cancel the same, hides the job from other users, and refuses to cancel a finished job", async () => {
    const token = await h.token();
    const { jobId, queueJobId } = await startHeldJob(token, "Twice");
    const first = await h.http.post(cancelPath(jobId)).set(bearer(token));
    expect(first.status).toBe(200);
    await tracker.endOf(queueJobId, 5000);
    const again = await h.http.post(cancelPath(jobId)).set(bearer(token));
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    // The research route cancels the same jobs.
    const viaResearch = await h.http.post(cancelPath(jobId, "research")).set(bearer(token));
    expect(viaResearch.status).toBe(200);
    expect(viaResearch.body.status).toBe("cancelled");

    const stranger = await h.token();
    const hidden = await h.http.post(cancelPath(jobId)).set(bearer(stranger));
    expect(hidden.status).toBe(404);
    expect((await h.http.post(cancelPath("00000000-0000-4000-8000-000000000000")).set(bearer(token))).status).toBe(404);

    // A job that ran to the end.
    const entity = await newEntity(h, token, { name: "Quick" });
    const done = await createJob(h, token, {
      entity_id: entity.id,
      objective: "Finish fast",
      platforms: ["hackernews"],
      collection_only: true,
    });
    expect(done.status).toBe(200);
    expect((await pollJob(h, token, done.body.job_id)).status).toBe("completed");
    const late = await h.http.post(cancelPath(done.body.job_id)).set(bearer(token));
    expectEndedConflict(late, "completed");
    expect((await h.deps.db.collectionJob.findUniqueOrThrow({ where: { id: done.body.job_id } })).status).toBe("completed");
  });

  it("removes a queued job from the BullMQ queue; it never runs once a worker starts", async () => {
    const token = await h.token();
    // No worker runs while the job is queued.
    await workers.close();
    const entity = await newEntity(h, token, { name: "Waiting" });
    const created = await createJob(h, token, {
      entity_id: entity.id,
      objective: "Never run",
      platforms: ["hackernews"],
      collection_only: true,
    });
    expect(created.status).toBe(200);
    const jobId = created.body.job_id as string;
    const row = await h.deps.db.collectionJob.findUniqueOrThrow({ where: { id: jobId } });
    const queue = h.deps.queues.get("collection");
    expect(await queue.getJobState(row.queueJobId)).toBe("waiting");

    const res = await h.http.post(cancelPath(jobId)).set(bearer(token));
    expect(res.status).toBe(200);
    expect(res.body.status).toBe("cancelled");
    expect(await queue.getJob(row.queueJobId)).toBeUndefined();
    expect(await pollJob(h, token, jobId, () => true)).toMatchObject({ status: "cancelled", stalled_reason: null });

    // A worker starts: a job queued after the cancel runs to the end; the cancelled one never ran.
    workers = h.startWorkers({ "collection.run.v1": collectionProcessor() }, 2);
    const later = await newEntity(h, token, { name: "Quick" });
    const after = await createJob(h, token, {
      entity_id: later.id,
      objective: "Runs after",
      platforms: ["hackernews"],
      collection_only: true,
    });
    expect((await pollJob(h, token, after.body.job_id)).status).toBe("completed");
    expect(hn.requests.some((r) => r.query.get("query")?.startsWith("Waiting"))).toBe(false);
    expect((await h.deps.db.collectionJob.findUniqueOrThrow({ where: { id: jobId } })).attempts).toBe(0);
  });
});
