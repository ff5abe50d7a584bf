import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runAdminCommand } from "../../src/governance/admin/commands.js";
import { createHarness, type Harness } from "../helpers/harness.js";

describe("health with Redis unreachable", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness({ REDIS_URL: "redis://127.0.0.1:1" });
  });
  afterAll(() => h.close());

  it("answers 503 naming Redis, while Postgres is ok", async () => {
    const res = await h.http.get("/agent/v1/health");
    expect(res.status).toBe(503);
    expect(res.body).toMatchObject({ status: "degraded", dependencies: { postgres: { status: "ok" }, redis: { status: "unavailable" } } });
  });

  it("still serves authenticated requests that do not need Redis", async () => {
    const res = await h.http.get("/api/user/keys").set("Authorization", `Bearer ${await h.token()}`);
    expect(res.status).toBe(200);
  });
});

describe("health with Postgres unreachable", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness();
    await h.deps.db.$disconnect();
  });
  afterAll(() => h.close());

  it("answers 503 for health and for requests that need the database", async () => {
    const { createDb } = await import("../../src/platform/db.js");
    const down = createDb("postgresql://postgres@127.0.0.1:1/none");
    const original = h.deps.db;
    Object.assign(h.deps, { db: down });
    try {
      const { checkHealth } = await import("../../src/governance/health/service.js");
      const health = await checkHealth(h.deps);
      expect(health.status).toBe("degraded");
      expect(health.dependencies.postgres.status).toBe("unavailable");
      expect(health.dependencies.redis.status).toBe("ok");

      const { createApp } = await import("../../src/app.js");
      const supertest = (await import("supertest")).default;
      const app = createApp({ ...h.deps, db: down });
      const viaHttp = await supertest(app).get("/agent/v1/health");
      expect(viaHttp.status).toBe(503);
      const res = await supertest(app)
        .get("/api/user/keys")
        .set("Authorization", `Bearer ${await h.token()}`);
      expect(res.status).toBe(503);
      expect(res.body).toEqual({ detail: "The database is unavailable; try again shortly.", code: "service_unavailable" });
      expect(res.headers["retry-after"]).toBe("5");
    } finally {
      Object.assign(h.deps, { db: original });
      await down.$disconnect();
    }
  });
});

describe("PostgreSQL down under the named statements of the job path", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness();
  });
  afterAll(() => h.close());

  it("answers a collection job's create with 503 when the pool's server cannot be reached", async () => {
    const { createDatabase } = await import("../../src/platform/db.js");
    const down = createDatabase("postgresql://postgres@127.0.0.1:1/none", 1);
    const { createApp } = await import("../../src/app.js");
    const supertest = (await import("supertest")).default;
    const token = await h.token();
    const entity = await h.http
      .post("/api/entities")
      .set("Authorization", `Bearer ${token}`)
      .send({ name: "Downco", url: "https://down.example" });
    expect(entity.status, JSON.stringify(entity.body)).toBe(201);
    try {
      // The bearer's user row and the entity are read through the client (up); the insert runs on the pool (down).
      const app = createApp({ ...h.deps, pool: down.pool });
      const res = await supertest(app)
        .post("/agent/v1/ingest/collection/jobs")
        .set("Authorization", `Bearer ${token}`)
        .send({ entity_id: entity.body.id, objective: "Down", platforms: ["web"], collection_only: true });
      expect(res.status, JSON.stringify(res.body)).toBe(503);
      expect(res.body).toEqual({ detail: "The database is unavailable; try again shortly.", code: "service_unavailable" });
      expect(await h.deps.db.collectionJob.count({ where: { entityId: entity.body.id } })).toBe(0);
    } finally {
      await down.db.$disconnect();
    }
  });
});

describe("operator commands", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness();
  });
  afterAll(() => h.close());

  it("enables and disables raw export for a subject", async () => {
    await expect(runAdminCommand(h.deps, ["enable-raw-export", "carol"])).rejects.toThrow(/no account with sub 'carol'/);
    expect((await h.http.get("/agent/v1/connection").set("Authorization", `Bearer ${await h.token("carol")}`)).status).toBe(200);
    expect(await runAdminCommand(h.deps, ["enable-raw-export", "carol"])).toBe("raw export enabled for carol");
    expect((await h.deps.db.user.findUniqueOrThrow({ where: { sub: "carol" } })).rawExportEnabled).toBe(true);
    await runAdminCommand(h.deps, ["disable-raw-export", "carol"]);
    expect((await h.deps.db.user.findUniqueOrThrow({ where: { sub: "carol" } })).rawExportEnabled).toBe(false);
    await expect(runAdminCommand(h.deps, ["enable-raw-export"])).rejects.toThrow(/usage/);
    await expect(runAdminCommand(h.deps, ["no-such-command"])).rejects.toThrow(/unknown command/);
  });
});
