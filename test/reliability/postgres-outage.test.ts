import { randomUUID } from "node:crypto";
import { Writable } from "node:stream";
import supertest from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../../src/app.js";
import { type AppDeps, closeDeps, createDeps } from "../../src/platform/deps.js";
import { createLogger } from "../../src/platform/logger.js";
import { whenReady } from "../../src/platform/redis.js";
import { createHarness, type Harness } from "../helpers/harness.js";
import { startTcpProxy, type TcpProxy, until } from "./support/processes.js";
import { buildWorld, type World } from "./support/world.js";

/**
 * PostgreSQL unreachable, without stopping the machine's shared server: the app under
 * test reaches its database through a TCP proxy that the test cuts and restores. While
 * cut, requests that need the database answer 503 with the documented body (and a key
 * is never reported as invalid just because it could not be looked up); an ingest batch
 * whose connection drops after its INSERT ran, before COMMIT, leaves zero rows; when
 * the proxy is restored the same app serves again, without a restart.
 */
let h: Harness;
let proxy: TcpProxy;
let deps: AppDeps;
let http: ReturnType<typeof supertest>;
let world: World;
const logs: string[] = [];

beforeAll(async () => {
  h = await createHarness();
  world = await buildWorld(h);
  const direct = new URL(h.config.DATABASE_URL);
  proxy = await startTcpProxy({ host: direct.hostname, port: Number(direct.port || 5432) });
  const proxied = new URL(h.config.DATABASE_URL);
  proxied.host = `127.0.0.1:${proxy.port}`;
  const base = createDeps({ ...h.config, DATABASE_URL: proxied.toString() }, "web-proxied");
  await whenReady(base.redis, 5000);
  const sink = new Writable({
    write(chunk, _enc, done) {
      logs.push(String(chunk));
      done();
    },
  });
  deps = { ...base, logger: createLogger("trace", "pg-outage", sink) };
  http = supertest(createApp(deps));
});
afterAll(async () => {
  if (deps) await closeDeps(deps);
  await proxy?.close();
  await h?.close();
});

const bearer = () => ({ Authorization: `Bearer ${world.token}` });

function expectUnavailable(res: { status: number; body: unknown; headers: Record<string, string> }, what: string) {
  expect(res.status, `${what}: ${JSON.stringify(res.body)}`).toBe(503);
  expect(res.body, what).toEqual({ detail: "The database is unavailable; try again shortly.", code: "service_unavailable" });
  expect(res.headers["retry-after"], what).toMatch(/^\d+$/);
}

function batch(tag: string) {
  return {
    entity_id: world.entityId,
    sources: Array.from({ length: 5 }, (_, i) => ({
      id: `${tag}-${i}`,
      platform: "reddit",
      url: `https://example.com/${tag}/${i}`,
      content: `Batch ${tag} row ${i}: onboarding took too long.`,
      comments: [{ id: `${tag}-${i}-c`, text: `Comment on ${tag} ${i}` }],
    })),
  };
}

const rowsOf = (tag: string) => h.deps.db.content.count({ where: { entityId: world.entityId, externalId: { startsWith: `${tag}-` } } });

describe("PostgreSQL unreachable", () => {
  it("answers 503 with the documented body while the connection is cut, and serves again when it returns", async () => {
    expect((await http.get("/api/entities").set(bearer())).status).toBe(200);
    proxy.cut();

    expectUnavailable(await http.get("/api/entities").set(bearer()), "bearer read");
    expectUnavailable(await http.get("/api/entities").set({ "X-API-Key": world.keys.all.raw }), "key read (not a 401)");
    expectUnavailable(await http.post("/agent/v1/ingest/content").set(bearer()).send(batch("cut")), "ingest");
    expectUnavailable(
      await http.post("/api/entities").set({ "X-API-Key": world.keys.all.raw }).send({ name: "Written while cut" }),
      "entity create",
    );
    const health = await http.get("/agent/v1/health");
    expect(health.status).toBe(503);
    expect(health.body).toMatchObject({
      status: "degraded",
      dependencies: { postgres: { status: "unavailable" }, redis: { status: "ok" } },
    });

    proxy.restore();
    await until("the app serving from the database again", async () => (await http.get("/api/entities").set(bearer())).status === 200);
    expect((await http.get("/agent/v1/health")).status).toBe(200);
    expect(await rowsOf("cut")).toBe(0);
    expect(await h.deps.db.entity.count({ where: { name: "Written while cut" } })).toBe(0);
  }, 30_000);

  it("leaves nothing of an ingest batch whose connection dropped between its INSERT and its COMMIT", async () => {
    const tag = `mid-${randomUUID().slice(0, 8)}`;
    // The batch's new rows are written by one COPY (or an INSERT on the row-by-row path).
    const cutDone = proxy.cutAfter(/COPY content_store|INSERT INTO content_store/, /COPY \d+|INSERT 0 \d+/);
    // (supertest sends on `then`.)
    const pending = http
      .post("/agent/v1/ingest/content")
      .set(bearer())
      .send(batch(tag))
      .then((r) => r);
    await cutDone;
    // The statement ran inside the transaction; the connection is gone before COMMIT.
    proxy.restore();
    const res = await pending;
    expectUnavailable(res, "ingest cut mid-transaction");
    // PostgreSQL ends the orphaned transaction (rolled back): not one row of the batch.
    await until("no transaction left open in the database", async () => {
      const open = await h.deps.db.$queryRaw<{ n: number }[]>`
        SELECT count(*)::int AS n FROM pg_stat_activity
        WHERE datname = current_database() AND state LIKE 'idle in transaction%'`;
      return open[0]?.n === 0;
    });
    expect(await rowsOf(tag)).toBe(0);

    // The client retries the same batch: stored exactly once.
    const retried = await http.post("/agent/v1/ingest/content").set(bearer()).send(batch(tag));
    expect(retried.status, JSON.stringify(retried.body)).toBe(200);
    expect(retried.body).toMatchObject({ inserted: 10, skipped_dedup: 0 });
    expect(await rowsOf(tag)).toBe(10);
    const again = await http.post("/agent/v1/ingest/content").set(bearer()).send(batch(tag));
    expect(again.body).toMatchObject({ inserted: 0, skipped_dedup: 10 });
    expect(await rowsOf(tag)).toBe(10);
  }, 30_000);

  it("logs the outage without any key, key hash or bearer", async () => {
    const all = logs.join("");
    expect(all).toMatch(/"status":503/);
    const keys = await h.deps.db.apiKey.findMany({ where: { userId: world.userId }, select: { keyHash: true } });
    for (const secret of [world.token, ...Object.values(world.keys).map((k) => k.raw), ...keys.map((k) => k.keyHash)]) {
      expect(all.includes(secret)).toBe(false);
    }
  });
});
