import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runAdminCommand } from "../../src/governance/admin/commands.js";
import { processors } from "../../workers/processors.js";
import { createHarness, type Harness } from "../helpers/harness.js";
import { type Listening, listen } from "./support/http.js";
import { type RedisServer, startRedisServer, until } from "./support/processes.js";
import { type HackerNewsFake, startHackerNews } from "./support/upstream.js";
import { buildWorld, type World } from "./support/world.js";

/**
 * Redis dies and comes back while jobs are queued and running. A dedicated redis-server
 * (never the machine's shared one) is killed with SIGKILL and started again on the same
 * port. While it is down the web answers 503 `service_unavailable` to everything that
 * enqueues work and leaves nothing half-created; health says degraded; reads from
 * Postgres keep working. It recovers by itself, without a restart, and every job that
 * Postgres recorded completes: with production's append-only file the queue survives
 * and the worker reconnects; with a Redis that lost everything, the operator's
 * `requeue-stalled` command re-enqueues the jobs from their rows.
 */
const STORIES = 3;

interface Setup {
  redis: RedisServer;
  hn: HackerNewsFake;
  h: Harness;
  world: World;
  web: Listening;
}

async function setUp(persistence: "aof" | "none"): Promise<Setup> {
  const redis = await startRedisServer({ persistence });
  const hn = await startHackerNews(STORIES);
  const h = await createHarness({
    REDIS_URL: redis.url,
    HACKERNEWS_API_URL: hn.url,
    COLLECTOR_ALLOW_PRIVATE_URLS: "true",
    COLLECTOR_RETRIES: "0",
    COLLECTOR_MAX_PAGES: "1",
    COLLECTOR_REQUESTS_PER_SECOND: "1000",
    NOTES_SYNC_WAIT_MS: "0",
    SWEEP_WAIT_MS: "0",
    MEETINGNOTES_API_URL: "http://127.0.0.1:9/",
  });
  const world = await buildWorld(h);
  return { redis, hn, h, world, web: await listen(h.app) };
}

async function tearDown(s: Setup | undefined) {
  await s?.web.close();
  await s?.h.close();
  await s?.hn.close();
  await s?.redis.stop();
}

const auth = (world: World) => ({ Authorization: `Bearer ${world.token}` });

async function newJob(s: Setup, name: string): Promise<{ jobId: string; entityId: string }> {
  const entity = await s.h.http
    .post("/api/entities")
    .set(auth(s.world))
    .send({ name, keywords: [name], platforms: ["hackernews"] });
  expect(entity.status, JSON.stringify(entity.body)).toBe(201);
  const job = await s.h.http
    .post("/agent/v1/ingest/collection/jobs")
    .set(auth(s.world))
    .send({
      entity_id: entity.body.id,
      objective: `What do people say about ${name}?`,
      collection_only: true,
      idempotency_key: `outage-${randomUUID()}`,
    });
  expect(job.status, JSON.stringify(job.body)).toBe(200);
  return { jobId: job.body.job_id, entityId: entity.body.id };
}

async function expectCollected(s: Setup, jobs: { jobId: string; entityId: string }[]) {
  for (const job of jobs) {
    const done = await until(`collection job ${job.jobId}`, async () => {
      const row = await s.h.deps.db.collectionJob.findUniqueOrThrow({ where: { id: job.jobId } });
      return row.status === "completed" || row.status === "failed" ? row : undefined;
    });
    expect(done.status, `${job.jobId}: ${done.error}`).toBe("completed");
    // Each story stored once, however often the job ran.
    expect(await s.h.deps.db.content.count({ where: { entityId: job.entityId } })).toBe(STORIES);
  }
}

describe("Redis killed and restarted with its append-only file (production settings)", () => {
  let s: Setup;
  beforeAll(async () => {
    s = await setUp("aof");
  });
  afterAll(() => tearDown(s));

  it("answers 503 for enqueueing while down, recovers by itself, and loses no job", async () => {
    const { h, world } = s;
    // Jobs queued before the outage; the first two are running (held at the upstream) when Redis dies.
    s.hn.hold();
    const before = [await newJob(s, "Alpha"), await newJob(s, "Beta"), await newJob(s, "Gamma"), await newJob(s, "Delta")];
    h.startWorkers({ "collection.run.v1": processors["collection.run.v1"] }, 2);
    // (The world's own two jobs, queued first, are among them.)
    await until("two jobs running at the upstream", async () => s.hn.held >= 2);
    expect(await h.deps.db.collectionJob.count({ where: { status: "running" } })).toBe(2);
    expect(await h.deps.db.collectionJob.count({ where: { status: "queued" } })).toBe(before.length);

    // Work that needs no queue, set up before the outage: a quote to approve, credits to reserve.
    await runAdminCommand(h.deps, ["grant-credits", world.workspaceId, "1000"]);
    const quote = await h.http.get(`/api/entities/${world.entityId}/skills/${world.skillId}/quote`).set(auth(world));
    expect(quote.status, JSON.stringify(quote.body)).toBe(200);
    const credits = async () => (await h.http.get(`/api/workspaces/${world.workspaceId}/credits`).set(auth(world))).body;
    const creditsBefore = await credits();

    await s.redis.kill();

    // Health: degraded, naming Redis.
    const health = await h.http.get("/agent/v1/health");
    expect(health.status).toBe(503);
    expect(health.body).toMatchObject({
      status: "degraded",
      dependencies: { redis: { status: "unavailable" }, postgres: { status: "ok" } },
    });

    // Everything that enqueues answers 503 with the documented body.
    const unavailable = (res: { status: number; body: unknown; headers: Record<string, string> }, what: string) => {
      expect(res.status, `${what}: ${JSON.stringify(res.body)}`).toBe(503);
      expect(res.body, what).toEqual({ detail: expect.any(String), code: "service_unavailable" });
      expect(res.headers["retry-after"], what).toMatch(/^\d+$/);
    };
    const key = `outage-${randomUUID()}`;
    unavailable(
      await h.http
        .post("/agent/v1/ingest/collection/jobs")
        .set(auth(world))
        .send({ entity_id: world.entityId, objective: "Queued while Redis is down?", idempotency_key: key }),
      "collection job",
    );
    expect(await h.deps.db.collectionJob.count({ where: { idempotencyKey: key } })).toBe(0);
    unavailable(
      await h.http
        .post("/agent/v1/ingest/research/jobs")
        .set(auth(world))
        .send({ entity_id: world.entityId, objective: "Research while Redis is down?", idempotency_key: `${key}-r` }),
      "research job",
    );
    const syncId = `outage-notes-${randomUUID()}`;
    unavailable(
      await h.http
        .post("/api/meetingnotes/sync")
        .set(auth(world))
        .send({ api_key: "grn_test_key_123456", entity_id: world.entityId, request_id: syncId }),
      "note sync",
    );
    const runKey = `outage-run-${randomUUID()}`;
    unavailable(
      await h.http
        .post(`/api/entities/${world.entityId}/skills/${world.skillId}/runs`)
        .set({ ...auth(world), "Idempotency-Key": runKey })
        .send({ scope_hash: quote.body.scope_hash, max_charge_credits: quote.body.max_charge_credits }),
      "workflow run",
    );
    expect(await h.deps.db.workflowRun.count({ where: { idempotencyKey: runKey } })).toBe(0);
    const analysisRequest = `outage-analysis-${randomUUID()}`;
    unavailable(
      await h.http
        .post("/agent/v1/analysis/run")
        .set(auth(world))
        .send({ question: "What is confusing about pricing?", entity_id: world.entityId, request_id: analysisRequest }),
      "analysis run",
    );
    // Neither refused request left a row queued with no job behind it.
    expect(await h.deps.db.noteSync.count({ where: { requestId: syncId } })).toBe(0);
    expect(await h.deps.db.analysis.count({ where: { requestId: analysisRequest } })).toBe(0);
    // Reads from Postgres still answer (the rate limiter lets requests through without Redis).
    expect((await h.http.get("/api/entities").set(auth(world))).status).toBe(200);
    expect((await h.http.get(`/agent/v1/ingest/collection/jobs/${before[0]?.jobId}`).set(auth(world))).status).toBe(200);
    // No credit was reserved for the refused run.
    expect(await credits()).toEqual(creditsBefore);

    // Redis comes back on the same port; the held upstream answers.
    await s.redis.start();
    s.hn.release();

    // The web recovers by itself: no restart, no new connection objects.
    await until("health ok again", async () => (await h.http.get("/agent/v1/health")).status === 200);
    const after = await until("a collection job accepted again", async () => {
      const res = await h.http
        .post("/agent/v1/ingest/collection/jobs")
        .set(auth(world))
        .send({ entity_id: world.entityId, objective: "Queued after the outage", idempotency_key: key, collection_only: true });
      return res.status === 200 ? res.body : undefined;
    });
    expect(after.job_id).toBeDefined();

    // Every job Postgres recorded before the outage completes, each story stored once.
    await expectCollected(s, before);
    for (const id of [world.collectionJobId, world.researchJobId]) {
      const row = await until(`job ${id}`, async () => {
        const r = await h.deps.db.collectionJob.findUniqueOrThrow({ where: { id } });
        return r.status === "completed" || r.status === "failed" ? r : undefined;
      });
      expect(row.status, `${id}: ${row.error}`).toBe("completed");
    }

    // The refused note sync and analysis, retried under the same request ids, go through now.
    h.startWorkers({ "notes.sync.v1": processors["notes.sync.v1"], "analysis.run.v1": processors["analysis.run.v1"] }, 2);
    const sync = await h.http
      .post("/api/meetingnotes/sync")
      .set(auth(world))
      .send({ api_key: "grn_test_key_123456", entity_id: world.entityId, request_id: syncId });
    expect([200, 202, 502, 503], JSON.stringify(sync.body)).toContain(sync.status);
    expect(sync.body.code).not.toBe("service_unavailable");
    const analysis = await fetch(`${s.web.url}/agent/v1/analysis/run`, {
      method: "POST",
      headers: { ...auth(world), "content-type": "application/json" },
      body: JSON.stringify({ question: "What is confusing about pricing?", entity_id: world.entityId, request_id: analysisRequest }),
    });
    expect(analysis.status).toBe(200);
    const stream = await analysis.text();
    expect(stream).toMatch(/event: (result|error)/);
    expect(await h.deps.db.analysis.count({ where: { requestId: analysisRequest } })).toBe(1);
  }, 90_000);
});

describe("Redis restarted empty (its queue lost)", () => {
  let s: Setup;
  beforeAll(async () => {
    s = await setUp("none");
  });
  afterAll(() => tearDown(s));

  it("recovers every job Postgres recorded with the operator's requeue-stalled command", async () => {
    const { h, world } = s;
    const jobs = [await newJob(s, "Epsilon"), await newJob(s, "Zeta"), await newJob(s, "Eta")];
    await s.redis.kill();
    await s.redis.start();
    // The queue is empty: nothing would ever run these jobs.
    await until("the producer reconnected", async () => (await h.http.get("/agent/v1/health")).status === 200);
    expect(await h.deps.queues.get("collection").getJobCounts("waiting", "active", "delayed")).toEqual({
      waiting: 0,
      active: 0,
      delayed: 0,
    });
    const polled = await h.http.get(`/agent/v1/ingest/collection/jobs/${jobs[0]?.jobId}`).set(auth(world));
    expect(polled.body.status).toBe("stalled");

    const report = await runAdminCommand(h.deps, ["requeue-stalled"]);
    for (const job of jobs) expect(report).toContain(job.jobId);
    h.startWorkers({ "collection.run.v1": processors["collection.run.v1"] }, 2);
    await expectCollected(s, jobs);
    // Run again, the command finds nothing left to do.
    expect(await runAdminCommand(h.deps, ["requeue-stalled"])).toMatch(/requeued 0/);
  }, 60_000);
});
