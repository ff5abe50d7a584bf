import { createServer, type Server } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearer, createEntityFor } from "../helpers/evidence.js";
import { createHarness, type Harness } from "../helpers/harness.js";

/** Evidence capture while Redis is down: 503 with Retry-After, and no run is left behind. */
let h: Harness;
let token: string;

beforeAll(async () => {
  const probe: Server = createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const closedPort = (probe.address() as { port: number }).port;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  h = await createHarness({ REDIS_URL: `redis://127.0.0.1:${closedPort}` });
  token = await h.token();
});
afterAll(() => h?.close());

describe("POST /api/sweeps/run while Redis is down", () => {
  it("answers 503 and leaves no run, so the same key works once Redis is back", async () => {
    const entity = await createEntityFor(h, token, { name: "Downco" });
    for (let i = 0; i < 2; i++) {
      const res = await h.http
        .post("/api/sweeps/run")
        .set(bearer(token))
        .send({ entity_id: entity.id, idempotency_key: "capture-down-key" });
      expect(res.status).toBe(503);
      expect(res.body.code).toBe("service_unavailable");
      expect(res.headers["retry-after"]).toBeDefined();
      expect(await h.deps.db.sweepRun.count()).toBe(0);
    }
  });

  it("a retry of a failed run that the queue refuses leaves no new attempt and the failed run as it was", async () => {
    const entity = await createEntityFor(h, token, { name: "Retryco" });
    const user = await h.deps.db.user.findFirstOrThrow({ where: { memberships: { some: { workspaceId: entity.workspace_id } } } });
    const failed = await h.deps.db.sweepRun.create({
      data: {
        userId: user.id,
        entityId: entity.id,
        idempotencyKey: "capture-failed-key",
        status: "failed",
        error: "gave up",
        cutoff: new Date(),
        finishedAt: new Date(),
      },
    });
    const res = await h.http
      .post("/api/sweeps/run")
      .set(bearer(token))
      .send({ entity_id: entity.id, idempotency_key: "capture-failed-key" });
    expect(res.status).toBe(503);
    expect(await h.deps.db.sweepRun.findMany({ where: { idempotencyKey: "capture-failed-key" } })).toEqual([failed]);
  });
});
