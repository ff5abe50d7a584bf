import { type ChildProcess, fork } from "node:child_process";
import { randomBytes } from "node:crypto";
import { createServer } from "node:net";
import { cpus, loadavg } from "node:os";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import autocannon from "autocannon";
import { Queue, Worker } from "bullmq";
import pg from "pg";
import { dropDatabase, onServer, withDatabase } from "../../src/platform/database-admin.js";
import { MIGRATIONS_DIR, migrate } from "../../src/platform/migrate.js";
import { createRedis, deleteKeys } from "../../src/platform/redis.js";
import { bearer } from "../lib/bearer.js";
import { cpuMs } from "../lib/proc.js";

/**
 * Job throughput, in one run on a fresh migrated database:
 * 1. raw BullMQ: `addBulk` N jobs, then a no-op Worker drains them;
 * 2. HTTP create only: autocannon POSTs collection jobs (validation, auth, tenancy check,
 *    row insert, enqueue) to the real web process, no worker running;
 * 3. processing only: the real worker process (no-op collector) drains those jobs to
 *    `completed` (claim, fenced progress, coverage record, completion);
 * 4. end to end: web and worker together, create through HTTP → completion.
 *
 * The HTTP load comes from `--users` callers (bearer tokens of distinct users, all
 * members of the entity's workspace), as many agents would send it.
 *
 * `--web N` runs N web processes (as a horizontally scaled web tier would), each loaded by
 * its own autocannon instance with its share of the connections and jobs.
 *
 * `--workers N` runs N worker processes (workers scale horizontally, as web processes do).
 *
 * Besides rates, it prints each job's create → completed latency (p50/p95, from the rows'
 * `created_at` and `finished_at`) and the CPU time spent per job by the web process(es),
 * the worker process(es) and the database's server processes serving the bench (read from
 * /proc): on a shared machine the CPU per job varies far less than the rates do.
 *
 *   npx tsx bench/queue/index.ts [--create-only] [--jobs 5000] [--connections 64] [--users 32] [--web 1] [--workers 1] [--raw-jobs 20000] [--worker-concurrency 32]
 */
const { values: args } = parseArgs({
  options: {
    jobs: { type: "string", default: "5000" },
    connections: { type: "string", default: "64" },
    "raw-jobs": { type: "string", default: "20000" },
    "worker-concurrency": { type: "string", default: "32" },
    users: { type: "string", default: "32" },
    web: { type: "string", default: "1" },
    workers: { type: "string", default: "1" },
    "cpu-prof": { type: "string" },
    /** Stop after the HTTP create phase (skips raw BullMQ, the drain and end to end). */
    "create-only": { type: "boolean", default: false },
    "database-url": { type: "string", default: "postgresql://postgres@127.0.0.1:5432/postgres" },
    "redis-url": { type: "string", default: "redis://127.0.0.1:6379" },
  },
});
const jobs = Number(args.jobs);
const connections = Number(args.connections);
const rawJobs = Number(args["raw-jobs"]);
const workerConcurrency = Number(args["worker-concurrency"]);
const users = Number(args.users);
const webProcesses = Number(args.web);
const workerProcesses = Number(args.workers);
const redisUrl = args["redis-url"] as string;

const SECRET = "bench-queue-secret-0123456789";
const stamp = randomBytes(4).toString("hex");
const prefix = `bench-q-${stamp}`;
const dbName = `res_bench_queue_${stamp}`;
const serverUrl = args["database-url"] as string;
const databaseUrl = withDatabase(serverUrl, dbName);
const root = fileURLToPath(new URL("../../", import.meta.url));
const children: ChildProcess[] = [];

/** Ends the run after the create phase (`--create-only`). */
class CreateOnly extends Error {}

const rate = (n: number, ms: number) => Math.round((n / ms) * 1000);
const fmt = (n: number) => n.toLocaleString("en-US");

async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, "127.0.0.1", r));
  const port = (srv.address() as { port: number }).port;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

async function waitFor(check: () => Promise<boolean>, timeoutMs: number, what: string) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** `--cpu-prof <dir>` writes a V8 CPU profile of every child process there (for finding hot spots). */
const profileDir = args["cpu-prof"];
function spawn(script: string, env: Record<string, string>): ChildProcess {
  const execArgv = ["--import", "tsx", ...(profileDir ? ["--cpu-prof", `--cpu-prof-dir=${profileDir}`] : [])];
  const child = fork(script, [], { cwd: root, env: { ...process.env, ...env }, execArgv, stdio: "inherit" });
  children.push(child);
  return child;
}

async function stop(child: ChildProcess) {
  if (child.exitCode !== null) return;
  const exited = new Promise((r) => child.once("exit", r));
  child.kill("SIGTERM");
  await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
  if (child.exitCode === null) child.kill("SIGKILL");
}

for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    for (const child of children) child.kill("SIGKILL");
    process.exit(130);
  });
}

// ---------------------------------------------------------------- setup
await onServer(serverUrl, (c) => c.query(`CREATE DATABASE "${dbName}"`));
await migrate(databaseUrl, MIGRATIONS_DIR);
const db = new pg.Client({ connectionString: databaseUrl });
await db.connect();
const {
  rows: [workspace],
} = await db.query<{ id: string }>("INSERT INTO workspaces (id, name) VALUES (gen_random_uuid(), 'bench') RETURNING id");
const {
  rows: [entity],
} = await db.query<{ id: string }>(
  "INSERT INTO entities (id, workspace_id, name, platforms, updated_at) VALUES (gen_random_uuid(), $1, 'Benchco', '{web}', now()) RETURNING id",
  [workspace?.id],
);
const tokens: string[] = [];
for (let i = 0; i < users; i++) {
  const sub = `bench-queue-user-${i}`;
  const {
    rows: [user],
  } = await db.query<{ id: string }>("INSERT INTO users (id, sub) VALUES (gen_random_uuid(), $1) RETURNING id", [sub]);
  await db.query("INSERT INTO workspace_members (workspace_id, user_id, role) VALUES ($1, $2, 'editor')", [workspace?.id, user?.id]);
  tokens.push(`Bearer ${await bearer(SECRET, sub)}`);
}
const count = async (where: string) =>
  Number((await db.query<{ n: string }>(`SELECT count(*) AS n FROM collection_jobs ${where}`)).rows[0]?.n ?? 0);

const env = {
  NODE_ENV: "production",
  DATABASE_URL: databaseUrl,
  DATABASE_POOL_SIZE: "20",
  REDIS_URL: redisUrl,
  REDIS_PREFIX: prefix,
  AUTH_JWT_SECRET: SECRET,
  LOG_LEVEL: "warn",
  RATE_LIMIT_PER_MINUTE: "0",
  BENCH_WORKER_CONCURRENCY: String(workerConcurrency),
};
const redis = createRedis(redisUrl, "worker", "bench");

try {
  console.log(
    `queue benchmark: ${fmt(jobs)} HTTP jobs × 2 phases, ${connections} connections, ${users} callers; ${fmt(rawJobs)} raw BullMQ jobs; ` +
      `${cpus().length} CPUs, load average ${loadavg()
        .map((l) => l.toFixed(2))
        .join(" ")} at start`,
  );

  // ---------------------------------------------------------------- 1. raw BullMQ
  if (!args["create-only"]) {
    const queue = new Queue("bench-raw", { connection: redis, prefix });
    const payloads = Array.from({ length: rawJobs }, (_, i) => ({ name: "noop", data: { jobId: `${i}` } }));
    const t0 = performance.now();
    for (let i = 0; i < payloads.length; i += 1000) await queue.addBulk(payloads.slice(i, i + 1000));
    const addMs = performance.now() - t0;
    let done = 0;
    const workerConnection = createRedis(redisUrl, "worker", "bench-raw");
    const finished = new Promise<void>((resolve) => {
      const worker = new Worker("bench-raw", async () => undefined, {
        connection: workerConnection,
        prefix,
        concurrency: workerConcurrency,
      });
      worker.on("completed", () => {
        done++;
        if (done === rawJobs) void worker.close().then(() => resolve());
      });
    });
    const t1 = performance.now();
    await finished;
    const processMs = performance.now() - t1;
    console.log(`raw BullMQ   addBulk: ${fmt(rate(rawJobs, addMs))} jobs/s (${Math.round(addMs)} ms)`);
    console.log(
      `raw BullMQ   process (no-op, concurrency ${workerConcurrency}): ${fmt(rate(rawJobs, processMs))} jobs/s (${Math.round(processMs)} ms)`,
    );
    workerConnection.disconnect();
    await queue.obliterate({ force: true });
    await queue.close();
  }

  // ---------------------------------------------------------------- web processes
  const bases: string[] = [];
  for (let i = 0; i < webProcesses; i++) {
    const port = await freePort();
    spawn("src/server.ts", { ...env, PORT: String(port), HOST: "127.0.0.1" });
    bases.push(`http://127.0.0.1:${port}`);
  }
  for (const base of bases) {
    await waitFor(async () => (await fetch(`${base}/agent/v1/health`).catch(() => undefined))?.ok === true, 30_000, "the web process");
  }

  let sent = 0;
  const load = (base: string, amount: number, conns: number, label: string) =>
    autocannon({
      url: `${base}/agent/v1/ingest/collection/jobs`,
      connections: conns,
      amount,
      requests: [
        {
          method: "POST",
          setupRequest: (req) => {
            const n = sent++;
            return {
              ...req,
              headers: { "content-type": "application/json", authorization: tokens[n % tokens.length] as string },
              body: JSON.stringify({
                entity_id: entity?.id,
                objective: "Benchmark the job platform",
                platforms: ["web"],
                collection_only: true,
                idempotency_key: `${label}-${n}`,
              }),
            };
          },
        },
      ],
    });
  /** Sends `amount` creates spread over the web processes; latency percentiles are the worst instance's. */
  const create = async (amount: number, label: string) => {
    const t0 = performance.now();
    const results = await Promise.all(
      bases.map((base, i) =>
        load(base, Math.floor(amount / bases.length) + (i < amount % bases.length ? 1 : 0), Math.ceil(connections / bases.length), label),
      ),
    );
    return {
      ms: performance.now() - t0,
      ok: results.reduce((n, r) => n + r["2xx"], 0),
      non2xx: results.reduce((n, r) => n + r.non2xx, 0),
      errors: results.reduce((n, r) => n + r.errors, 0),
      p50: Math.max(...results.map((r) => r.latency.p50)),
      p99: Math.max(...results.map((r) => r.latency.p99)),
    };
  };

  // Warm up the web processes (JIT, connection pools), then measure.
  await create(500 * bases.length, "warm");
  const warmed = await count("");

  // ---------------------------------------------------------------- 2. HTTP create only
  const webPids = children.map((c) => c.pid as number);
  const backendPids = async () =>
    (await db.query<{ pid: number }>("SELECT pid FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()", [dbName])).rows.map(
      (r) => r.pid,
    );
  const createPgPids = await backendPids();
  const redisPid = Number(/process_id:(\d+)/.exec(await redis.info("server"))?.[1] ?? 0);
  const commits = async () => {
    // Statistics reach pg_stat_database within a second of each transaction's end.
    await new Promise((r) => setTimeout(r, 1500));
    return Number((await db.query<{ n: string }>("SELECT xact_commit AS n FROM pg_stat_database WHERE datname = $1", [dbName])).rows[0]?.n);
  };
  const commits0 = await commits();
  const createCpu0 = { web: cpuMs(webPids), pg: cpuMs(createPgPids), redis: cpuMs([redisPid]), bench: process.cpuUsage() };
  const created = await create(jobs, "create");
  const createPgAll = [...new Set([...createPgPids, ...(await backendPids())])];
  const benchCpu = process.cpuUsage(createCpu0.bench);
  const createCpu = {
    web: cpuMs(webPids) - createCpu0.web,
    pg: cpuMs(createPgAll) - createCpu0.pg,
    redis: cpuMs([redisPid]) - createCpu0.redis,
    bench: (benchCpu.user + benchCpu.system) / 1000,
  };
  const createCommits = (await commits()) - commits0;
  const createdRows = (await count("")) - warmed;
  // The rows' own span (first to last insert), free of the load generator's start and stop.
  const {
    rows: [span],
  } = await db.query<{ ms: number }>(
    "SELECT extract(epoch FROM max(created_at) - min(created_at)) * 1000 AS ms FROM collection_jobs WHERE idempotency_key LIKE 'create-%'",
  );
  const perCreate = (ms: number) => (ms / created.ok).toFixed(2);
  console.log(
    `HTTP create  ${fmt(rate(created.ok, created.ms))} jobs/s through HTTP, ${webProcesses} web process(es) ` +
      `(${fmt(created.ok)} × 200, ${created.non2xx} non-2xx, ${created.errors} errors; latency p50 ${created.p50} ms, p99 ${created.p99} ms; ${fmt(createdRows)} rows; ` +
      `${fmt(rate(createdRows, Number(span?.ms ?? 0)))} rows/s from the first insert to the last)`,
  );
  console.log(
    `CPU per create  web ${perCreate(createCpu.web)} ms, PostgreSQL ${perCreate(createCpu.pg)} ms, Redis ${perCreate(createCpu.redis)} ms, ` +
      `load generator (autocannon) ${perCreate(createCpu.bench)} ms; ${(((createCpu.web + createCpu.pg + createCpu.redis + createCpu.bench) / created.ms) * 100).toFixed(0)} % of one CPU in all; ` +
      `${(createCommits / created.ok).toFixed(2)} PostgreSQL transactions per create`,
  );

  if (args["create-only"]) throw new CreateOnly();

  // ---------------------------------------------------------------- 3. processing only
  const workers = Array.from({ length: workerProcesses }, () => spawn("bench/queue/worker.ts", env));
  const workerPids = workers.map((c) => c.pid as number);
  const total = await count("");
  const drainCommits0 = await commits();
  const t2 = performance.now();
  await waitFor(async () => (await count("WHERE status = 'completed'")) === total, 600_000, "the worker to drain");
  const drainMs = performance.now() - t2;
  const drainCpu = cpuMs(workerPids);
  const drainCommits = (await commits()) - drainCommits0;
  console.log(
    `worker       drained ${fmt(total)} jobs to completed: ${fmt(rate(total, drainMs))} jobs/s, ${workerProcesses} worker process(es) ` +
      `(includes worker start-up; worker CPU ${(drainCpu / total).toFixed(2)} ms per job; ` +
      `${(drainCommits / total).toFixed(2)} PostgreSQL transactions per job)`,
  );

  // ---------------------------------------------------------------- 4. end to end
  const before = await count("");
  const pgPids = await backendPids();
  const cpu0 = { web: cpuMs(webPids), worker: cpuMs(workerPids), pg: cpuMs(pgPids) };
  const t3 = performance.now();
  const e2e = await create(jobs, "e2e");
  const createMs = performance.now() - t3;
  await waitFor(async () => (await count("WHERE status = 'completed'")) === before + e2e.ok, 600_000, "end-to-end completion");
  const e2eMs = performance.now() - t3;
  // Server processes started during the phase count from zero.
  const pgAll = [...new Set([...pgPids, ...(await backendPids())])];
  const cpu = { web: cpuMs(webPids) - cpu0.web, worker: cpuMs(workerPids) - cpu0.worker, pg: cpuMs(pgAll) - cpu0.pg };
  const {
    rows: [latency],
  } = await db.query<{ p50: number; p95: number; max: number }>(
    `SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) AS p50, percentile_cont(0.95) WITHIN GROUP (ORDER BY ms) AS p95, max(ms) AS max
     FROM (SELECT extract(epoch FROM finished_at - created_at) * 1000 AS ms FROM collection_jobs WHERE idempotency_key LIKE 'e2e-%') j`,
  );
  console.log(
    `end to end   created ${fmt(rate(e2e.ok, createMs))} jobs/s through HTTP while the worker ran; ` +
      `create → completed ${fmt(rate(e2e.ok, e2eMs))} jobs/s (${fmt(e2e.ok)} jobs in ${Math.round(e2eMs)} ms; ${e2e.non2xx} non-2xx); ` +
      `HTTP p50 ${e2e.p50} ms, p99 ${e2e.p99} ms; create → completed p50 ${Math.round(latency?.p50 ?? 0)} ms, p95 ${Math.round(latency?.p95 ?? 0)} ms, max ${Math.round(latency?.max ?? 0)} ms`,
  );
  console.log(
    `CPU per job  web ${(cpu.web / e2e.ok).toFixed(2)} ms, worker ${(cpu.worker / e2e.ok).toFixed(2)} ms, ` +
      `PostgreSQL ${(cpu.pg / e2e.ok).toFixed(2)} ms (end to end; ${pgAll.length} server processes)`,
  );
  // Updates that stayed on their page with no new index entries (HOT), over every update of a job row so far
  // (statistics reach pg_stat_user_tables within a second of each transaction's end).
  await new Promise((r) => setTimeout(r, 1500));
  const {
    rows: [upd],
  } = await db.query<{ upd: string; hot: string }>(
    "SELECT n_tup_upd AS upd, n_tup_hot_upd AS hot FROM pg_stat_user_tables WHERE relname = 'collection_jobs'",
  );
  console.log(`job row updates  ${fmt(Number(upd?.upd ?? 0))}, of them HOT ${fmt(Number(upd?.hot ?? 0))} (no index entries written)`);
  await Promise.all(workers.map(stop));
  console.log(
    `load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(" ")} at end`,
  );
} catch (err) {
  if (!(err instanceof CreateOnly)) throw err;
} finally {
  await Promise.all(children.map(stop));
  await db.end();
  await deleteKeys(redis, `${prefix}:*`);
  redis.disconnect();
  await dropDatabase(serverUrl, dbName);
}
// Done: autocannon and the clients may still hold idle handles.
process.exit(0);
