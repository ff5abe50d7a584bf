import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runAdminCommand } from "../../src/governance/admin/commands.js";
import { collectionProcessor } from "../../src/intake/collection/runner.js";
import { derivedUuid } from "../../src/intake/collection/service.js";
import { deriveJobId } from "../../src/platform/queues.js";
import { createHarness, type Harness } from "../helpers/harness.js";
import { type Fake, hackernewsFake, hnStories } from "./fakes.js";
import { bearer, createJob, newEntity, pollJob, until } from "./support.js";

/** Postgres is the truth: a job whose queue entry vanished shows as stalled and can be re-enqueued. */
let h: Harness;
let token: string;
let hn: Fake;

beforeAll(async () => {
  hn = await hackernewsFake((q) => (q.startsWith("Lostco") ? hnStories(3, "l") : []));
  h = await createHarness({ HACKERNEWS_API_URL: `${hn.url}/api/v1`, COLLECTOR_REQUESTS_PER_SECOND: "1000" });
  token = await h.token();
});
afterAll(async () => {
  await h?.close();
  await hn?.close();
});

const get = (jobId: string) => h.http.get(`/agent/v1/ingest/collection/jobs/${jobId}`).set(bearer(token));

// Before any worker runs in this file, so the job is still queued when it is cancelled.
describe("an operator requeue of a cancelled job", () => {
  it("requeue-job refuses a cancelled job: cancelled is final", async () => {
    const entity = await newEntity(h, token, { name: "Stopco" });
    const created = await createJob(h, token, {
      entity_id: entity.id,
      objective: "A job its caller stops",
      platforms: ["twitter"],
      collection_only: true,
    });
    const cancelled = await h.http.post(`/agent/v1/ingest/collection/jobs/${created.body.job_id}/cancel`).set(bearer(token));
    expect(cancelled.status, JSON.stringify(cancelled.body)).toBe(200);
    const row = await h.deps.db.collectionJob.findUniqueOrThrow({ where: { id: created.body.job_id } });
    const queue = h.deps.queues.get("collection");
    const before = await queue.getJobState(row.queueJobId);
    // A refusal: the command exits 1 with why.
    await expect(runAdminCommand(h.deps, ["requeue-job", created.body.job_id])).rejects.toMatchObject({
      exitCode: 1,
      message: `collection job ${created.body.job_id} is cancelled, which is final; nothing to requeue (create a new job to collect again)`,
    });
    // Nothing changed: the row stays cancelled and its queue entry as it was.
    const after = await h.deps.db.collectionJob.findUniqueOrThrow({ where: { id: created.body.job_id } });
    expect(after).toMatchObject({ status: "cancelled", updatedAt: row.updatedAt });
    expect(await queue.getJobState(row.queueJobId)).toBe(before);
  });
});

describe("a job whose queue entry vanished", () => {
  it("answers stalled, is re-enqueued by requeue-stalled, then completes from where it was", async () => {
    const entity = await newEntity(h, token, { name: "Lostco" });
    const created = await createJob(h, token, {
      entity_id: entity.id,
      objective: "Find what was lost",
      platforms: ["hackernews"],
      collection_only: true,
    });
    const other = await createJob(h, token, {
      entity_id: entity.id,
      objective: "Another job, still queued",
      platforms: ["hackernews"],
      collection_only: true,
    });
    const row = await h.deps.db.collectionJob.findUniqueOrThrow({ where: { id: created.body.job_id } });

    expect((await get(created.body.job_id)).body).toMatchObject({ status: "queued", stalled_reason: null });
    // Redis loses the entry (a flush, a failover without persistence).
    await (await h.deps.queues.get("collection").getJob(row.queueJobId))?.remove();

    const stalled = await get(created.body.job_id);
    expect(stalled.body.status).toBe("stalled");
    expect(stalled.body.stalled_reason).toMatch(/no entry/);
    expect((await get(other.body.job_id)).body.status).toBe("queued");

    const output = await runAdminCommand(h.deps, ["requeue-stalled"]);
    expect(output).toBe(`checked 2 unfinished collection job(s); requeued 1: ${created.body.job_id}`);
    expect((await get(created.body.job_id)).body).toMatchObject({ status: "queued", stalled_reason: null });
    expect(await h.deps.queues.get("collection").getJobState(row.queueJobId)).toBe("waiting");
    // Nothing else is stalled now.
    expect(await runAdminCommand(h.deps, ["requeue-stalled"])).toMatch(/requeued 0$/);

    h.startWorkers({ "collection.run.v1": collectionProcessor() });
    const done = await pollJob(h, token, created.body.job_id);
    expect(done).toMatchObject({ status: "completed", coverage: { hackernews: "exhaustive" } });
    expect(done.counts.stored).toBeGreaterThan(0);

    // Completed is final: the operator's requeue is refused and changes nothing.
    const finished = await h.deps.db.collectionJob.findUniqueOrThrow({ where: { id: created.body.job_id } });
    await expect(runAdminCommand(h.deps, ["requeue-job", created.body.job_id])).rejects.toMatchObject({
      exitCode: 1,
      message: `collection job ${created.body.job_id} is completed, which is final; nothing to requeue (create a new job to collect again)`,
    });
    expect(await h.deps.db.collectionJob.findUniqueOrThrow({ where: { id: created.body.job_id } })).toEqual(finished);
    expect(await h.deps.db.collectionJob.count({ where: { retryOf: created.body.job_id } })).toBe(0);
  });

  it("requeue-job refuses a job the queue still holds and unknown ids", async () => {
    const entity = await newEntity(h, token, { name: "Heldco" });
    const created = await createJob(h, token, {
      entity_id: entity.id,
      objective: "Still queued job",
      platforms: ["twitter"],
      collection_only: true,
    });
    await expect(runAdminCommand(h.deps, ["requeue-job", created.body.job_id])).rejects.toMatchObject({
      exitCode: 1,
      message: expect.stringMatching(/already (waiting|active|completed)|is completed/),
    });
    await expect(runAdminCommand(h.deps, ["requeue-job", "00000000-0000-4000-8000-000000000000"])).rejects.toThrow(/no collection job/);
  });

  it("retries a failed job with requeue-job as a new job (attempt 2, retry_of); the failed job stays failed", async () => {
    const entity = await newEntity(h, token, { name: "Failco" });
    const key = "failco-key-0001";
    const request = {
      entity_id: entity.id,
      objective: "A job that failed",
      platforms: ["hackernews", "twitter"],
      collection_only: true,
      idempotency_key: key,
    };
    const created = await createJob(h, token, request);
    const done = await pollJob(h, token, created.body.job_id);
    expect(done).toMatchObject({ status: "completed", attempt: 1, retry_of: null });
    // Simulate a job that ended failed (its hackernews platform failed after every attempt), created 10 days ago.
    await h.deps.db.$executeRaw`
      UPDATE collection_jobs SET status = 'failed', error = 'boom', created_at = created_at - interval '10 days',
        progress = jsonb_set(progress, '{hackernews,status}', '"failed"')
      WHERE id = ${created.body.job_id}::uuid`;
    const failed = await h.deps.db.collectionJob.findUniqueOrThrow({ where: { id: created.body.job_id } });
    const hnCalls = hn.requests.length;

    const answer = await runAdminCommand(h.deps, ["requeue-job", failed.id]);
    const retry = await h.deps.db.collectionJob.findFirstOrThrow({ where: { retryOf: failed.id } });
    expect(answer).toBe(
      `collection job ${failed.id} is failed, which is final; started collection job ${retry.id} to retry it (retry_of ${failed.id})`,
    );
    expect(retry).toMatchObject({
      userId: failed.userId,
      entityId: failed.entityId,
      idempotencyKey: key,
      requestHash: failed.requestHash,
      objective: failed.objective,
      platforms: failed.platforms,
      collectionOnly: true,
      attempt: 2,
      retryOf: failed.id,
    });
    expect(retry.id).not.toBe(failed.id);
    expect(retry.queueJobId).not.toBe(failed.queueJobId);

    const again = await pollJob(h, token, retry.id);
    expect(again).toMatchObject({ status: "completed", attempt: 2, retry_of: failed.id, attempts: 1 });
    expect(again.errors.map((e) => e.platform)).toEqual(["twitter"]);
    // Only the reopened platform ran again (twitter had settled: blocked), from its cursor, in the first attempt's window.
    expect(again.progress.twitter).toMatchObject({ status: "blocked" });
    const search = hn.requests.slice(hnCalls).find((r) => r.path === "/api/v1/search");
    const windowStart = Math.floor((failed.createdAt.getTime() - 90 * 86_400_000) / 1000);
    expect(search?.query.get("numericFilters")).toBe(`created_at_i>=${windowStart}`);

    // The failed job is exactly as it ended, and its key's create answers the new attempt.
    expect(await h.deps.db.collectionJob.findUniqueOrThrow({ where: { id: failed.id } })).toEqual(failed);
    expect((await get(failed.id)).body).toMatchObject({ status: "failed", attempt: 1, retry_of: null });
    const replay = await createJob(h, token, request);
    expect(replay.status).toBe(200);
    expect(replay.body).toMatchObject({ job_id: retry.id, status: "completed" });

    // Requeueing the failed job again names the attempt already made; the completed retry is final.
    expect(await runAdminCommand(h.deps, ["requeue-job", failed.id])).toBe(
      `collection job ${failed.id} is failed, which is final; it was already retried as collection job ${retry.id} (attempt 2, completed)`,
    );
    await expect(runAdminCommand(h.deps, ["requeue-job", retry.id])).rejects.toThrow(/is completed, which is final; nothing to requeue/);
    expect(await h.deps.db.collectionJob.count({ where: { idempotencyKey: key } })).toBe(2);
  });

  it("two concurrent requeues of one failed job start one new attempt", async () => {
    const entity = await newEntity(h, token, { name: "Twiceco" });
    const created = await createJob(h, token, {
      entity_id: entity.id,
      objective: "A job failed twice over",
      platforms: ["twitter"],
      collection_only: true,
    });
    await pollJob(h, token, created.body.job_id);
    await h.deps.db.$executeRaw`UPDATE collection_jobs SET status = 'failed', error = 'boom' WHERE id = ${created.body.job_id}::uuid`;
    const failed = await h.deps.db.collectionJob.findUniqueOrThrow({ where: { id: created.body.job_id } });

    const answers = await Promise.all([1, 2, 3].map(() => runAdminCommand(h.deps, ["requeue-job", failed.id])));
    const attempts = await h.deps.db.collectionJob.findMany({ where: { retryOf: failed.id } });
    expect(attempts).toHaveLength(1);
    expect(answers.filter((a) => a.includes(`started collection job ${attempts[0]?.id}`))).toHaveLength(1);
    expect(answers.filter((a) => a.includes(`already retried as collection job ${attempts[0]?.id}`))).toHaveLength(2);
    expect(await pollJob(h, token, attempts[0]?.id as string)).toMatchObject({ status: "completed", attempt: 2 });
    expect(await h.deps.db.collectionJob.findUniqueOrThrow({ where: { id: failed.id } })).toEqual(failed);
  });

  it("a queue entry delivered before its row exists waits for the row and then runs it", async () => {
    const entity = await newEntity(h, token, { name: "Earlyco" });
    const user = await h.deps.db.user.findFirstOrThrow({ where: { memberships: { some: { workspaceId: entity.workspace_id } } } });
    const key = "early-delivery-01";
    const queueJobId = deriveJobId("collection", user.id, key);
    // What the create does first: the queue entry, under the ids derived from caller and key.
    await h.deps.queues.enqueue("collection.run.v1", { jobId: derivedUuid("collection-job", user.id, key) }, { jobId: queueJobId });
    await until(async () => (await h.deps.queues.get("collection").getJobState(queueJobId)) === "active");

    const created = await createJob(h, token, {
      entity_id: entity.id,
      objective: "Arrives late",
      platforms: ["twitter"],
      idempotency_key: key,
      collection_only: true,
    });
    expect(created.status).toBe(200);
    const done = await pollJob(h, token, created.body.job_id);
    expect(done).toMatchObject({ status: "completed", attempts: 1, coverage: { twitter: "blocked" } });
  });
});
