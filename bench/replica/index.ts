/**
 * Replica reads on a local streaming replica.
 *
 *   npx tsx bench/replica/index.ts [--samples 200]
 *
 * Starts a PostgreSQL primary and a `pg_basebackup -R` standby of it on free ports (the
 * helper the replica test uses, test/support/pg-replica.ts), migrates the primary, and runs
 * the real web application on a local port with DATABASE_REPLICA_URLS set and, beside it,
 * one without. Measures: replay lag (a row committed on the primary until a query on the
 * replica sees it, polled on one open connection) and `GET /api/entities/:id` over HTTP for a
 * reader routed to the replica, for the writer within its read-after-write window (primary),
 * and on the app without replicas. Redis from REDIS_URL (default 127.0.0.1:6379).
 */
import { once } from "node:events";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { cpus, loadavg } from "node:os";
import { performance } from "node:perf_hooks";
import pg from "pg";
import { createApp } from "../../src/app.js";
import { loadConfig } from "../../src/platform/config.js";
import { onServer } from "../../src/platform/database-admin.js";
import { type AppDeps, closeDeps, createDeps } from "../../src/platform/deps.js";
import { MIGRATIONS_DIR, migrate } from "../../src/platform/migrate.js";
import { deleteKeys, whenReady } from "../../src/platform/redis.js";
import { startPgPair } from "../../test/support/pg-replica.js";
import { bearer } from "../lib/bearer.js";

const args = process.argv.slice(2);
const SAMPLES = Number(args[args.indexOf("--samples") + 1] ?? 0) || 200;
const SECRET = "bench-secret-for-hs256-tokens-only";
const PREFIX = `bench-replica-${process.pid}`;
const DB = "res";

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
const fmt = (ms: number) => `${ms.toFixed(2)} ms`;
function summary(label: string, samples: number[]): void {
  const s = [...samples].sort((a, b) => a - b);
  console.log(
    `${label.padEnd(48)} p50 ${fmt(pct(s, 50))}  p95 ${fmt(pct(s, 95))}  max ${fmt(s[s.length - 1] ?? Number.NaN)}  (n=${s.length})`,
  );
}

async function startWeb(databaseUrl: string, replicaUrl: string | undefined, windowMs: number) {
  const config = loadConfig({
    NODE_ENV: "production",
    DATABASE_URL: databaseUrl,
    ...(replicaUrl ? { DATABASE_REPLICA_URLS: replicaUrl } : {}),
    DATABASE_PRIMARY_AFTER_WRITE_MS: String(windowMs),
    AUTH_JWT_SECRET: SECRET,
    LOG_LEVEL: "silent",
    RATE_LIMIT_PER_MINUTE: "0",
    REDIS_URL: process.env.REDIS_URL ?? "redis://127.0.0.1:6379",
    REDIS_PREFIX: PREFIX,
  });
  const deps = createDeps(config, "bench");
  await whenReady(deps.redis, 5000);
  const server: Server = createApp(deps).listen(0, "127.0.0.1");
  await once(server, "listening");
  return { deps, server, base: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

const token = (sub: string) => bearer(SECRET, sub, "1h");

/** Requests to each target in turn (so load on the shared machine hits all alike), after ten warm-up rounds. */
async function timedRounds(targets: { url: string; bearer: string }[], n: number): Promise<number[][]> {
  const out: number[][] = targets.map(() => []);
  for (let i = 0; i < n + 10; i++) {
    for (const [k, t] of targets.entries()) {
      const t0 = performance.now();
      const res = await fetch(t.url, { headers: { Authorization: `Bearer ${t.bearer}` } });
      await res.arrayBuffer();
      const ms = performance.now() - t0;
      if (res.status !== 200) throw new Error(`${t.url}: ${res.status}`);
      if (i >= 10) out[k]?.push(ms);
    }
  }
  return out;
}

async function main(): Promise<void> {
  console.log(
    `cpus ${cpus().length}, load ${loadavg()
      .map((l) => l.toFixed(2))
      .join(" ")}`,
  );
  const t0 = performance.now();
  const pair = await startPgPair();
  console.log(`primary + replica started in ${(performance.now() - t0).toFixed(0)} ms`);
  const opened: AppDeps[] = [];
  const servers: Server[] = [];
  try {
    await onServer(pair.primaryUrl(DB), (c) => c.query(`CREATE DATABASE ${DB}`));
    await migrate(pair.primaryUrl(DB), MIGRATIONS_DIR);
    await pair.waitReplayed();

    // Replay lag: one row at a time, committed on the primary, polled on the replica.
    const primary = new pg.Client({ connectionString: pair.primaryUrl(DB) });
    const replica = new pg.Client({ connectionString: pair.replicaUrl(DB) });
    for (const c of [primary, replica]) c.on("error", () => undefined); // a failed query rejects; stop() may cut the socket
    await Promise.all([primary.connect(), replica.connect()]);
    await primary.query("CREATE TABLE bench_lag (id int PRIMARY KEY)");
    await pair.waitReplayed();
    const lags: number[] = [];
    for (let i = 1; i <= SAMPLES; i++) {
      await primary.query("INSERT INTO bench_lag VALUES ($1)", [i]);
      const committed = performance.now();
      for (;;) {
        const { rowCount } = await replica.query("SELECT 1 FROM bench_lag WHERE id = $1", [i]);
        if (rowCount) break;
      }
      lags.push(performance.now() - committed);
    }
    await Promise.all([primary.end(), replica.end()]);
    summary("replay lag (commit → visible on replica)", lags);

    // HTTP reads. The writer's window is long enough to span its measurement.
    const routed = await startWeb(pair.primaryUrl(DB), pair.replicaUrl(DB), 600_000);
    const plain = await startWeb(pair.primaryUrl(DB), undefined, 600_000);
    opened.push(routed.deps, plain.deps);
    servers.push(routed.server, plain.server);
    const writer = await token("bench-writer");
    const reader = await token("bench-reader");
    const created = await fetch(`${routed.base}/api/entities`, {
      method: "POST",
      headers: { Authorization: `Bearer ${writer}`, "Content-Type": "application/json" },
      body: JSON.stringify({ name: "Bench entity" }),
    });
    const entity = (await created.json()) as { id: string; workspace_id: string };
    await fetch(`${routed.base}/api/entities`, { headers: { Authorization: `Bearer ${reader}` } });
    await routed.deps.db.$executeRaw`
      INSERT INTO workspace_members (workspace_id, user_id, role)
      SELECT ${entity.workspace_id}::uuid, id, 'viewer' FROM users WHERE sub = 'bench-reader'`;
    await pair.waitReplayed();

    const path = `/api/entities/${entity.id}`;
    const [toReplica = [], writerOnPrimary = [], noReplicas = []] = await timedRounds(
      [
        { url: `${routed.base}${path}`, bearer: reader },
        { url: `${routed.base}${path}`, bearer: writer },
        { url: `${plain.base}${path}`, bearer: reader },
      ],
      SAMPLES,
    );
    summary("GET entity: reader, routed to the replica", toReplica);
    summary("GET entity: writer within its window (primary)", writerOnPrimary);
    summary("GET entity: app without replicas (primary)", noReplicas);

    // The routing decision alone: the Redis mark check of a caller that wrote nothing.
    const auth = {
      user: { id: "00000000-0000-0000-0000-000000000000", sub: "x", rawExportEnabled: false, isInternalAgent: false },
      via: "bearer" as const,
    };
    const decisions: number[] = [];
    for (let i = 0; i < SAMPLES; i++) {
      const d0 = performance.now();
      await routed.deps.reads.forCaller(auth);
      decisions.push(performance.now() - d0);
    }
    summary("forCaller() decision (Redis EXISTS)", decisions);
  } finally {
    for (const s of servers) s.close();
    if (opened[0]) await deleteKeys(opened[0].redis, `${PREFIX}:*`).catch(() => 0);
    await Promise.allSettled(opened.map((d) => closeDeps(d)));
    await pair.stop();
  }
}

await main();
