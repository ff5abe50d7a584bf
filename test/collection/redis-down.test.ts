import { createServer, type Server } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { requeueJob } from "../../src/intake/collection/requeue.js";
import { commandFromBody, derivedUuid, requestHash } from "../../src/intake/collection/service.js";
import { deriveJobId } from "../../src/platform/queues.js";
import { createHarness, type Harness } from "../helpers/harness.js";
import { createJob, newEntity } from "./support.js";

/**
 * Redis unavailable at create: the app's queue connection points at a port where
 * nothing answers, while Postgres works. The create must answer 503 and leave no row.
 */
let h: Harness;
let token: string;
let closedPort: number;

beforeAll(async () => {
  // Reserve a free port, then close it, so nothing listens there.
  const probe: Server = createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  closedPort = (probe.address() as { port: number }).port;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  h = await createHarness({ REDIS_URL: `redis://127.0.0.1:${closedPort}` });
  token = await h.token("redis-down-user");
});
afterAll(() => h?.close());

describe("POST /agent/v1/ingest/collection/jobs while Redis is down", () => {
  it("answers 503 with Retry-After and leaves no half-created job", async () => {
    const entity = await newEntity(h, token, { name: "Downco" });
    const res = await createJob(h, token, { entity_id: entity.id, objective: "Will this be queued?", idempotency_key: "redis-down-key-1" });
    expect(res.status).toBe(503);
    expect(res.body).toEqual({ detail: expect.any(String), code: "service_unavailable" });
    expect(res.headers["retry-after"]).toBeDefined();
    expect(await h.deps.db.collectionJob.count()).toBe(0);

    // The same key can be used again once Redis is back: nothing holds it.
    const again = await createJob(h, token, {
      entity_id: entity.id,
      objective: "A different objective",
      idempotency_key: "redis-down-key-1",
    });
    expect(again.status).toBe(503);
    expect(await h.deps.db.collectionJob.count()).toBe(0);
  });

  it("still answers polls from Postgres for jobs that exist", async () => {
    const entity = await newEntity(h, token, { name: "Pollco" });
    const user = await h.deps.db.user.findUniqueOrThrow({ where: { sub: "redis-down-user" } });
    const row = await h.deps.db.collectionJob.create({
      data: {
        userId: user.id,
        entityId: entity.id,
        idempotencyKey: "stored-before-outage",
        requestHash: "x",
        queueJobId: "collection-x",
        objective: "Stored before the outage",
        platforms: ["reddit"],
        status: "running",
      },
    });
    const res = await h.http.get(`/agent/v1/ingest/collection/jobs/${row.id}`).set({ Authorization: `Bearer ${token}` });
    expect(res.status).toBe(200);
    // The queue cannot be asked, so the stored status is answered (not "stalled").
    expect(res.body).toMatchObject({ job_id: row.id, status: "running", stalled_reason: null });
  });

  it("replays a started job from Postgres, but answers 503 for a queued one it cannot confirm in the queue", async () => {
    const entity = await newEntity(h, token, { name: "Replayco" });
    const user = await h.deps.db.user.findUniqueOrThrow({ where: { sub: "redis-down-user" } });
    const request = (key: string) => ({
      entity_id: entity.id,
      objective: "Replayed during the outage",
      collection_only: false,
      questions: [],
      depth: "brief" as const,
      platforms: ["reddit" as const],
      idempotency_key: key,
    });
    for (const [key, status] of [
      ["outage-running-1", "running"],
      ["outage-queued-01", "queued"],
    ] as const) {
      await h.deps.db.collectionJob.create({
        data: {
          id: derivedUuid("collection-job", user.id, key),
          userId: user.id,
          entityId: entity.id,
          idempotencyKey: key,
          requestHash: requestHash(commandFromBody({ ...request(key), collection_only: false }, "collection")),
          queueJobId: deriveJobId("collection", user.id, key),
          objective: "Replayed during the outage",
          platforms: ["reddit"],
          status,
        },
      });
    }
    const running = await createJob(h, token, request("outage-running-1"));
    expect(running.status).toBe(200);
    expect(running.body).toMatchObject({ status: "running", job_id: derivedUuid("collection-job", user.id, "outage-running-1") });
    const queued = await createJob(h, token, request("outage-queued-01"));
    expect(queued.status).toBe(503);
    // Nothing was deleted: the row predates this request.
    expect(await h.deps.db.collectionJob.count({ where: { idempotencyKey: "outage-queued-01" } })).toBe(1);
  });

  it("an operator's retry of a failed job that the queue refuses leaves no new attempt and the failed job as it was", async () => {
    const entity = await newEntity(h, token, { name: "Retryco" });
    const user = await h.deps.db.user.findUniqueOrThrow({ where: { sub: "redis-down-user" } });
    const failed = await h.deps.db.collectionJob.create({
      data: {
        userId: user.id,
        entityId: entity.id,
        idempotencyKey: "failed-before-outage",
        requestHash: "x",
        queueJobId: deriveJobId("collection", user.id, "failed-before-outage"),
        objective: "Failed before the outage",
        platforms: ["reddit"],
        status: "failed",
        error: "boom",
        attempts: 5,
        finishedAt: new Date(),
      },
    });
    await expect(requeueJob(h.deps, failed.id)).rejects.toThrow(/job queue is unavailable/);
    expect(await h.deps.db.collectionJob.findMany({ where: { idempotencyKey: "failed-before-outage" } })).toEqual([failed]);
  });
});
