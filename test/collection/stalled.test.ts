import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runAdminCommand } from "../../src/admin/commands.js";
import { collectionProcessor } from "../../src/collection/runner.js";
import { derivedUuid } from "../../src/collection/service.js";
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
    const answer = await runAdminCommand(h.deps, ["requeue-job", created.body.job_id]);
    expect(answer).toBe(
      `collection job ${created.body.job_id} is cancelled, which is final; nothing to requeue (create a new job to collect again)`,
    );
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

    expect(await runAdminCommand(h.deps, ["requeue-job", created.body.job_id])).toMatch(/is completed; nothing to requeue/);
  });

  it("requeue-job refuses a job the queue still holds and unknown ids", async () => {
    const entity = await newEntity(h, token, { name: "Heldco" });
    const created = await createJob(h, token, {
      entity_id: entity.id,
      objective: "Still queued job",
      platforms: ["twitter"],
      collection_only: true,
    });
    const answer = await runAdminCommand(h.deps, ["requeue-job", created.body.job_id]);
    expect(answer).toMatch(/already (waiting|active|completed)|is completed/);
    await expect(runAdminCommand(h.deps, ["requeue-job", "00000000-0000-4000-8000-000000000000"])).rejects.toThrow(/no collection job/);
  });

  it("re-runs a failed job's failed platforms with requeue-job", async () => {
    const entity = await newEntity(h, token, { name: "Failco" });
    const created = await createJob(h, token, {
      entity_id: entity.id,
      objective: "A job that failed",
      platforms: ["hackernews"],
      collection_only: true,
    });
    const done = await pollJob(h, token, created.body.job_id);
    expect(done.status).toBe("completed");
    // Simulate a job that ended failed (its platform failed after every attempt).
    await h.deps.db.$executeRaw`
      UPDATE collection_jobs SET status = 'failed', error = 'boom',
        progress = jsonb_set(progress, '{hackernews,status}', '"failed"')
      WHERE id = ${created.body.job_id}::uuid`;
    expect(await runAdminCommand(h.deps, ["requeue-job", created.body.job_id])).toBe(`collection job ${created.body.job_id} requeued`);
    const again = await pollJob(h, token, created.body.job_id);
    expect(again).toMatchObject({ status: "completed", attempts: 2, errors: [] });
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
