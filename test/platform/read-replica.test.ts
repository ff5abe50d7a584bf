import { randomUUID } from "node:crypto";
import { type AddressInfo, createServer, type Socket } from "node:net";
import supertest from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../../src/app.js";
import { jobEnded } from "../../src/jobs/lifecycle.js";
import { loadConfig } from "../../src/platform/config.js";
import { onServer } from "../../src/platform/database-admin.js";
import { type AppDeps, closeDeps, createDeps } from "../../src/platform/deps.js";
import { MIGRATIONS_DIR, migrate } from "../../src/platform/migrate.js";
import { deleteKeys, whenReady } from "../../src/platform/redis.js";
import { randomId, signToken, TEST_JWT_SECRET, testRedisUrl } from "../helpers/harness.js";
import { startTcpProxy, until as until2 } from "../reliability/support/processes.js";
import { type PgPair, startPgPair } from "../support/pg-replica.js";

/**
 * Replica reads against a real streaming replica: a PostgreSQL primary started for this file
 * (initdb on a free port, migrated), a `pg_basebackup -R` standby of it on another port, and
 * the real app on both. Pausing WAL replay on the standby holds it behind the primary, so a
 * read that misses a fresh row was answered by the replica and one that sees it by the primary.
 */
// Long enough for the writer's reads under a loaded machine, short enough to wait out once.
const WINDOW_MS = 3000;
const DB = "res";

let pair: PgPair;
const prefix = randomId("t");
const opened: AppDeps[] = [];

function appOn(replicas: boolean | string[], settings: Record<string, string> = {}) {
  const urls = replicas === true ? [pair.replicaUrl(DB)] : replicas === false ? [] : replicas;
  const config = loadConfig({
    NODE_ENV: "test",
    DATABASE_URL: pair.primaryUrl(DB),
    ...(urls.length > 0 ? { DATABASE_REPLICA_URLS: urls.join(",") } : {}),
    DATABASE_POOL_SIZE: "3",
    DATABASE_PRIMARY_AFTER_WRITE_MS: String(WINDOW_MS),
    // These tests hold replay paused to tell the replica's answers from the primary's; the lag
    // limit is tested on its own below.
    DATABASE_REPLICA_MAX_LAG_MS: "600000",
    ...settings,
    REDIS_URL: testRedisUrl(),
    REDIS_PREFIX: prefix,
    AUTH_JWT_SECRET: TEST_JWT_SECRET,
    LOG_LEVEL: "silent",
    RATE_LIMIT_PER_MINUTE: "0",
  });
  const deps = createDeps(config, "test");
  opened.push(deps);
  return { deps, http: supertest(createApp(deps)) };
}

const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });
const inRecovery = async (db: AppDeps["db"]) => (await db.$queryRaw<{ r: boolean }[]>`SELECT pg_is_in_recovery() AS r`)[0]?.r;

let web1: ReturnType<typeof appOn>;
let web2: ReturnType<typeof appOn>;
let primaryOnly: ReturnType<typeof appOn>;

beforeAll(async () => {
  pair = await startPgPair();
  await onServer(pair.primaryUrl(DB), (c) => c.query(`CREATE DATABASE ${DB}`));
  await migrate(pair.primaryUrl(DB), MIGRATIONS_DIR);
  await pair.waitReplayed();
  // Two web processes with the replica (sharing Redis, as deployed) and one without.
  web1 = appOn(true);
  web2 = appOn(true);
  primaryOnly = appOn(false);
  await whenReady(web1.deps.redis, 5000);
}, 40_000);

afterAll(async () => {
  await pair?.pauseReplay(false).catch(() => undefined);
  if (opened[0]) await deleteKeys(opened[0].redis, `${prefix}:*`).catch(() => 0);
  await Promise.allSettled(opened.map((d) => closeDeps(d)));
  await pair?.stop();
});

describe("replica reads", () => {
  it("hands stale-tolerant reads the replica's client (model reads, raw SQL, read-only batches) and keeps deps.db on the primary", async () => {
    const { deps } = web1;
    expect(deps.reads.replicaCount).toBe(1);
    const handle = await deps.reads.forCaller(undefined);
    expect(await inRecovery(handle)).toBe(true);
    const [batch] = await handle.$transaction([handle.$queryRaw<{ r: boolean }[]>`SELECT pg_is_in_recovery() AS r`]);
    expect(batch?.[0]?.r).toBe(true);
    await expect(handle.user.count()).resolves.toBeGreaterThanOrEqual(0);
    expect(await inRecovery(deps.db)).toBe(false);
  });

  it("answers a routed read from the replica, the writer's own reads from the primary until the window lapses", async () => {
    const writerSub = randomId("writer-");
    const readerSub = randomId("reader-");
    const writer = await signToken(writerSub);
    const reader = await signToken(readerSub);
    const { deps } = web1;

    // The writer's personal workspace (and a first entity); the reader becomes a member of it.
    const first = await web1.http.post("/api/entities").set(bearer(writer)).send({ name: "First" });
    expect(first.status).toBe(201);
    expect((await web1.http.get("/api/entities").set(bearer(reader))).status).toBe(200);
    const readerUser = await deps.db.user.findUniqueOrThrow({ where: { sub: readerSub } });
    await deps.db.workspaceMember.create({ data: { workspaceId: first.body.workspace_id, userId: readerUser.id, role: "editor" } });
    await pair.waitReplayed();

    await pair.pauseReplay(true);
    try {
      // The write lands on the primary; the paused replica does not have it.
      const created = await web1.http.post("/api/entities").set(bearer(writer)).send({ name: "Fresh" });
      expect(created.status).toBe(201);
      const id = created.body.id as string;
      expect(await deps.db.entity.count({ where: { id } })).toBe(1);
      expect(await (await deps.reads.forCaller(undefined)).entity.count({ where: { id } })).toBe(0);

      // Read-your-writes: the writer sees it through this process and through another one.
      expect((await web1.http.get(`/api/entities/${id}`).set(bearer(writer))).status).toBe(200);
      expect((await web2.http.get(`/api/entities/${id}`).set(bearer(writer))).status).toBe(200);
      // Another member, who wrote nothing, reads from the replica: not there yet.
      expect((await web1.http.get(`/api/entities/${id}`).set(bearer(reader))).status).toBe(404);
      const listed = await web2.http.get("/api/entities").set(bearer(reader));
      expect(listed.body.map((e: { id: string }) => e.id)).not.toContain(id);
      // Without DATABASE_REPLICA_URLS every read goes to the primary.
      expect((await primaryOnly.http.get(`/api/entities/${id}`).set(bearer(reader))).status).toBe(200);

      // Once the writer's mark lapses, its reads go to the replica too.
      const writerUser = await deps.db.user.findUniqueOrThrow({ where: { sub: writerSub } });
      const markKey = `${prefix}:db:wrote:${writerUser.id}`;
      expect(await deps.redis.exists(markKey)).toBe(1);
      await until(async () => (await deps.redis.exists(markKey)) === 0, WINDOW_MS * 3);
      expect((await web2.http.get(`/api/entities/${id}`).set(bearer(writer))).status).toBe(404);
    } finally {
      await pair.pauseReplay(false);
    }
    await pair.waitReplayed();
    const entity = await web1.http.get("/api/entities").set(bearer(reader));
    expect(entity.body.map((e: { name: string }) => e.name)).toContain("Fresh");
  });

  it("serves a search (a POST that writes nothing) from the replica without marking the caller", async () => {
    const writerSub = randomId("searcher-w-");
    const readerSub = randomId("searcher-r-");
    const writer = await signToken(writerSub);
    const reader = await signToken(readerSub);
    const first = await web1.http.post("/api/entities").set(bearer(writer)).send({ name: "Searched" });
    expect(first.status).toBe(201);
    expect((await web1.http.get("/api/entities").set(bearer(reader))).status).toBe(200);
    const readerUser = await web1.deps.db.user.findUniqueOrThrow({ where: { sub: readerSub } });
    await web1.deps.db.workspaceMember.create({ data: { workspaceId: first.body.workspace_id, userId: readerUser.id, role: "editor" } });
    await pair.waitReplayed();

    const word = `zebrafinch${randomUUID().slice(0, 8)}`;
    const search = (app: typeof web1, token: string) => app.http.post("/agent/v1/search").set(bearer(token)).send({ query: word });
    const found = (res: { body: { results: { content_id: string }[] } }) => res.body.results.map((r) => r.content_id);
    await pair.pauseReplay(true);
    try {
      const ingested = await web1.http
        .post("/agent/v1/ingest/content")
        .set(bearer(writer))
        .send({
          entity_id: first.body.id,
          sources: [
            {
              id: randomUUID(),
              url: `https://example.com/${randomUUID()}`,
              author: "a",
              platform: "reddit",
              content: `The ${word} is lovely.`,
            },
          ],
        });
      expect(ingested.status).toBe(200);
      const [contentId] = ingested.body.content_ids as string[];

      // The reader's search reads the replica, which has not replayed the row, and marks nobody.
      const byReader = await search(web2, reader);
      expect(byReader.status).toBe(200);
      expect(found(byReader)).toEqual([]);
      expect(await web1.deps.redis.exists(`${prefix}:db:wrote:${readerUser.id}`)).toBe(0);
      // The writer's own search is on the primary; so is every search without replicas.
      expect(found(await search(web2, writer))).toEqual([contentId]);
      expect(found(await search(primaryOnly, reader))).toEqual([contentId]);
    } finally {
      await pair.pauseReplay(false);
    }
    await pair.waitReplayed();
    expect(found(await search(web2, reader))).toHaveLength(1);
  });

  it("marks a job's owner as a writer when the job ends, so the owner's replica reads see what it stored", async () => {
    const ownerSub = randomId("owner-");
    const created = await web1.http
      .post("/api/entities")
      .set(bearer(await signToken(ownerSub)))
      .send({ name: "Owned" });
    expect(created.status).toBe(201);
    const owner = await web1.deps.db.user.findUniqueOrThrow({ where: { sub: ownerSub } });
    const jobId = randomUUID();
    await web1.deps.db.$executeRaw`
      INSERT INTO collection_jobs (id, user_id, entity_id, idempotency_key, request_hash, queue_job_id, route, status,
        objective, questions, depth, platforms, collection_only, progress, updated_at, finished_at)
      VALUES (${jobId}::uuid, ${owner.id}::uuid, ${created.body.id}::uuid, ${randomId("k-")}, 'h', ${randomId("q-")}, 'collection',
        'completed', 'Owned objective', '{}', 'brief', '{web}', true, '{}'::jsonb, now(), now())`;
    await pair.waitReplayed();
    const auth = { via: "bearer" as const, user: { id: owner.id, sub: ownerSub, rawExportEnabled: false, isInternalAgent: false } };
    const markKey = `${prefix}:db:wrote:${owner.id}`;
    // The create's own mark lapses (web2 never saw the create, so it goes by Redis alone).
    await web1.deps.redis.del(markKey);
    expect(await inRecovery(await web2.deps.reads.forCaller(auth))).toBe(true);

    // A worker (its own deps, connected to Redis as a running worker is; a window this test cannot
    // outlast on a loaded machine; what it logs at warn, since jobEnded never throws) ends the job.
    const { deps: worker } = appOn(true, { DATABASE_PRIMARY_AFTER_WRITE_MS: "60000", LOG_LEVEL: "warn" });
    await whenReady(worker.redis, 5000);
    await jobEnded(worker, { kind: "collection_job", id: jobId, status: "completed" });
    expect(await web1.deps.redis.pttl(markKey)).toBeGreaterThan(0);
    expect(await inRecovery(await web2.deps.reads.forCaller(auth))).toBe(false);
  });

  it("skips a replica that falls behind by more than DATABASE_REPLICA_MAX_LAG_MS, and uses it again once it catches up", async () => {
    const { deps, http } = appOn(true, {
      DATABASE_REPLICA_MAX_LAG_MS: "1000",
      DATABASE_REPLICA_CHECK_MS: "100",
      ADMIN_USER: "operator",
      ADMIN_PASSWORD: "operator-password",
    });
    expect(await inRecovery(await deps.reads.forCaller(undefined))).toBe(true);
    expect(deps.reads.status()).toMatchObject([{ index: 0, healthy: true, problem: null }]);
    await pair.pauseReplay(true);
    try {
      await deps.db.user.create({ data: { id: randomUUID(), sub: randomId("lagging-") } });
      const skipped = await until2(
        "the lagging replica skipped",
        async () => !(await inRecovery(await deps.reads.forCaller(undefined))),
        10_000,
      );
      expect(skipped).toBe(true);
      const [state] = deps.reads.status();
      expect(state?.healthy).toBe(false);
      expect(state?.lagMs).toBeGreaterThan(1000);
      expect(state?.problem).toMatch(/^replay is at least \d+ ms behind the primary \(limit 1000 ms\)$/);
    } finally {
      await pair.pauseReplay(false);
    }
    await until2("the replica back in use", async () => inRecovery(await deps.reads.forCaller(undefined)), 10_000);
    expect(deps.reads.status()[0]?.healthy).toBe(true);
    const metrics = await http.get("/metrics").auth("operator", "operator-password");
    expect(metrics.text).toContain('db_replica_healthy{replica="0"} 1');
    expect(metrics.text).toMatch(/db_replica_lag_seconds\{replica="0"\} \d/);
  });

  it("skips a replica that does not answer, reads from the others or the primary, and uses it again when it answers", async () => {
    const proxy = await startTcpProxy({ host: "127.0.0.1", port: Number(new URL(pair.replicaUrl(DB)).port) });
    try {
      const viaProxy = `postgresql://postgres@127.0.0.1:${proxy.port}/${DB}`;
      const { deps } = appOn([viaProxy, pair.replicaUrl(DB)], { DATABASE_REPLICA_CHECK_MS: "100" });
      // Both in use: over enough picks, each is handed out.
      await until2("both replicas handed out", async () => {
        const picks = new Set(await Promise.all(Array.from({ length: 20 }, () => deps.reads.forCaller(undefined))));
        return picks.size === 2;
      });
      proxy.cut();
      await until2("the cut replica skipped", async () => deps.reads.status()[0]?.healthy === false);
      expect(deps.reads.status()).toMatchObject([
        { index: 0, healthy: false, lagMs: null, problem: expect.stringMatching(/^does not answer: /) },
        { index: 1, healthy: true },
      ]);
      const picks = await Promise.all(Array.from({ length: 20 }, () => deps.reads.forCaller(undefined)));
      expect(new Set(picks).size).toBe(1);
      await expect(Promise.all(picks.map(inRecovery))).resolves.toEqual(Array(20).fill(true));
      proxy.restore();
      await until2("the replica back in use", async () => deps.reads.status()[0]?.healthy === true);

      // With no replica well, replica reads go to the primary.
      const { deps: lone } = appOn([viaProxy], { DATABASE_REPLICA_CHECK_MS: "100" });
      proxy.cut();
      const handle = await until2("the primary answering", async () => {
        const h = await lone.reads.forCaller(undefined);
        return h === lone.db ? h : undefined;
      });
      expect(await inRecovery(handle)).toBe(false);
    } finally {
      await proxy.close();
    }
  });

  it("puts no second check on a replica whose first one hangs", async () => {
    // A server that accepts connections and never answers, as a replica behind a black hole would.
    const sockets: Socket[] = [];
    const silent = createServer((socket) => sockets.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    try {
      const port = (silent.address() as AddressInfo).port;
      const { deps } = appOn([`postgresql://postgres@127.0.0.1:${port}/${DB}`], { DATABASE_REPLICA_CHECK_MS: "100" });
      // The first check times out after a second; the replica is skipped and reads go to the primary.
      expect(await deps.reads.forCaller(undefined)).toBe(deps.db);
      expect(deps.reads.status()[0]?.problem).toMatch(/^does not answer: no answer within 1000 ms$/);
      // Later checks find the first still waiting and send nothing more.
      await until2("a later check", async () => deps.reads.status()[0]?.problem?.includes("previous check is still waiting"));
      await new Promise((r) => setTimeout(r, 1500));
      expect(sockets).toHaveLength(1);
    } finally {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });

  it("without DATABASE_REPLICA_URLS hands every caller the primary", async () => {
    const { deps } = primaryOnly;
    expect(deps.reads.replicaCount).toBe(0);
    const handle = await deps.reads.forCaller(undefined);
    expect(handle).toBe(deps.db);
    expect(await inRecovery(handle)).toBe(false);
  });
});

/** Polls `check` until it holds; the mark's expiry is a Redis TTL, so there is no event to await. */
async function until(check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
