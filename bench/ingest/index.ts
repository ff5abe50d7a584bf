import { randomBytes } from "node:crypto";
import { once } from "node:events";
import type { AddressInfo } from "node:net";
import { createInterface } from "node:readline";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { parseArgs } from "node:util";
import { Redis } from "ioredis";
import pg from "pg";
import { from as copyFrom } from "pg-copy-streams";
import { pino } from "pino";
import { createApp } from "../../src/app.js";
import { loadConfig } from "../../src/platform/config.js";
import { dropDatabase, onServer, withDatabase } from "../../src/platform/database-admin.js";
import { closeDeps, createDeps } from "../../src/platform/deps.js";
import { MIGRATIONS_DIR, migrate } from "../../src/platform/migrate.js";
import { deleteKeys, whenReady } from "../../src/platform/redis.js";
import { bearer } from "../lib/bearer.js";
import { cpuMs, postmasterOf, serverCpuMs, threadCpuMs } from "../lib/proc.js";
import { freePort, procfileCommand, runProcess, sampleRss, waitFor } from "../load/services.js";
import { COPY_SQL, copyData, makeBatch } from "./corpus.js";

/**
 * Ingest throughput through HTTP (POST /agent/v1/ingest/content: validation, dedup keys,
 * one transaction per batch, enrichment queued) beside a raw COPY of the same rows into
 * the same table, in the same run, on a fresh migrated database.
 *
 *   npx tsx bench/ingest/index.ts [--rounds 3] [--warmup 2] [--concurrency 10] [--writers N] [--sources 500] [--comments 5] [--in-process]
 *
 * The service is the Procfile's web process (the compiled build with its V8 flags, built first when
 * stale), as production runs it; the bench process is the client of both paths. `--in-process` serves
 * the app from the bench process instead (its heap then also holds the bench's prepared batches).
 * Prints each path's rows/s, their ratio, and the CPU each path costs per 1,000 rows: the service,
 * the bench's client, and the PostgreSQL server (when it runs on this machine).
 */
const { values: args } = parseArgs({
  options: {
    rounds: { type: "string", default: "3" },
    warmup: { type: "string", default: "2" },
    concurrency: { type: "string", default: "10" },
    /** The web process's INGEST_WRITERS (default: the service's own default). */
    writers: { type: "string" },
    sources: { type: "string", default: "500" },
    comments: { type: "string", default: "5" },
    "source-words": { type: "string", default: "250" },
    "comment-words": { type: "string", default: "40" },
    "database-url": { type: "string", default: "postgresql://postgres@127.0.0.1:5432/postgres" },
    "redis-url": { type: "string", default: "redis://127.0.0.1:6379" },
    "in-process": { type: "boolean", default: false },
  },
});
const rounds = Number(args.rounds);
const warmupRounds = Number(args.warmup);
const concurrency = Number(args.concurrency);
const shape = {
  sources: Number(args.sources),
  comments: Number(args.comments),
  sourceWords: Number(args["source-words"]),
  commentWords: Number(args["comment-words"]),
};

const SECRET = "bench-ingest-secret-0123456789";
const stamp = randomBytes(4).toString("hex");
const dbName = `res_bench_ingest_${stamp}`;
const serverUrl = args["database-url"] as string;
const databaseUrl = withDatabase(serverUrl, dbName);
const redisUrl = args["redis-url"] as string;
const redisPrefix = `bench-${stamp}`;

await onServer(serverUrl, (c) => c.query(`CREATE DATABASE "${dbName}"`));
await migrate(databaseUrl, MIGRATIONS_DIR);

/** The service under test: where it listens, its CPU so far (ms), and each batch's transaction time it logged. */
interface Service {
  base: string;
  cpuMs: () => number;
  /** CPU so far by thread name (`threadCpuMs`). */
  threadCpuMs: () => Map<string, number>;
  /** Peak resident memory of the web process (MB); NaN when the service is the bench process. */
  peakRssMb: () => number;
  txMs: number[];
  /** Each batch's wait for one of the process's ingest writers (INGEST_WRITERS), as logged. */
  turnMs: number[];
  close: () => Promise<void>;
}

const serviceEnv = {
  NODE_ENV: "production",
  DATABASE_URL: databaseUrl,
  DATABASE_POOL_SIZE: String(concurrency + 2),
  REDIS_URL: redisUrl,
  REDIS_PREFIX: redisPrefix,
  AUTH_JWT_SECRET: SECRET,
  // "ingest batch stored", with each batch's transaction time, is logged at debug level.
  LOG_LEVEL: "debug",
  RATE_LIMIT_PER_MINUTE: "0",
  ...(args.writers ? { INGEST_WRITERS: args.writers } : {}),
};

/** Each line the service logs: the transaction times kept, warnings and errors shown. */
function readLog(txMs: number[], turnMs: number[]) {
  return (line: string) => {
    if (line.trim() === "") return;
    let entry: { msg?: string; txMs?: number; turnMs?: number; level?: number };
    try {
      entry = JSON.parse(line);
    } catch {
      process.stderr.write(`${line}\n`);
      return;
    }
    if (entry.msg === "ingest batch stored" && entry.txMs !== undefined) {
      txMs.push(entry.txMs);
      turnMs.push(entry.turnMs ?? 0);
    } else if ((entry.level ?? 0) >= 40) process.stderr.write(`${line}\n`);
  };
}

/** CPU (user + system, ms) of this process so far. */
const ownCpuMs = () => {
  const used = process.cpuUsage();
  return (used.user + used.system) / 1000;
};

async function webProcess(): Promise<Service> {
  const port = await freePort();
  const web = runProcess("web", procfileCommand("web"), { ...serviceEnv, HOST: "127.0.0.1", PORT: String(port) });
  const txMs: number[] = [];
  const turnMs: number[] = [];
  const onLine = readLog(txMs, turnMs);
  if (web.child.stdout) createInterface({ input: web.child.stdout }).on("line", onLine);
  const base = `http://127.0.0.1:${port}`;
  await waitFor("the web process", async () => (await fetch(`${base}/agent/v1/health`)).status === 200);
  const pid = web.child.pid ?? 0;
  const rss = sampleRss([web]);
  return {
    base,
    cpuMs: () => cpuMs([pid]),
    threadCpuMs: () => threadCpuMs(pid),
    peakRssMb: () => rss.peak.web ?? 0,
    txMs,
    turnMs,
    close: async () => {
      rss.stop();
      await web.stop();
    },
  };
}

async function inProcess(): Promise<Service> {
  const config = loadConfig(serviceEnv);
  const deps = createDeps(config, "bench");
  const txMs: number[] = [];
  const turnMs: number[] = [];
  const onLine = readLog(txMs, turnMs);
  deps.logger = pino({ level: "debug" }, { write: onLine });
  // As the web process does: queues created before the connection is ready would never start.
  if (!(await whenReady(deps.redis, 5000))) throw new Error("Redis is not reachable");
  const server = createApp(deps).listen(0, "127.0.0.1");
  // As the web process does: idle keep-alive sockets outlive the client's, so reuse never races a close.
  server.keepAliveTimeout = 65_000;
  await once(server, "listening");
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    cpuMs: ownCpuMs,
    threadCpuMs: () => threadCpuMs(process.pid),
    peakRssMb: () => Number.NaN,
    txMs,
    turnMs,
    close: async () => {
      server.close();
      await closeDeps(deps);
    },
  };
}

const service = args["in-process"] ? await inProcess() : await webProcess();
const base = service.base;
const copyPool = new pg.Pool({ connectionString: databaseUrl, max: concurrency });

const token = await bearer(SECRET, "bench-user");
const headers = { Authorization: `Bearer ${token}`, "Content-Type": "application/json" };

async function createEntity(name: string) {
  const res = await fetch(`${base}/api/entities`, { method: "POST", headers, body: JSON.stringify({ name }) });
  if (res.status !== 201) throw new Error(`entity: ${res.status} ${await res.text()}`);
  const body = (await res.json()) as { id: string; workspace_id: string };
  return { id: body.id, workspaceId: body.workspace_id };
}

const seconds = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e9;
const latencies: number[] = [];
async function postBatch(body: string): Promise<number> {
  const started = process.hrtime.bigint();
  const res = await fetch(`${base}/agent/v1/ingest/content`, { method: "POST", headers, body });
  if (res.status !== 200) throw new Error(`ingest: ${res.status} ${(await res.text()).slice(0, 500)}`);
  const answer = (await res.json()) as { inserted: number; total_received: number };
  if (answer.inserted !== answer.total_received) throw new Error(`ingest reused rows: ${JSON.stringify(answer)}`);
  latencies.push(seconds(started) * 1000);
  return answer.inserted;
}

async function copyText(data: Buffer): Promise<void> {
  const client = await copyPool.connect();
  try {
    await pipeline(Readable.from([data]), client.query(copyFrom(COPY_SQL)));
  } finally {
    client.release();
  }
}

const rowsPerBatch = shape.sources * (1 + shape.comments);
const totals = { httpRows: 0, httpSeconds: 0, copyRows: 0, copySeconds: 0, copy1Rows: 0, copy1Seconds: 0, httpBytes: 0 };

/**
 * CPU (user + system, ms) per path, summed over its phases: the service (the web process; in
 * `--in-process` mode the bench process, client included), the bench's client (this process: the
 * HTTP client, or the COPY client) and the PostgreSQL server (`serverCpuMs`): where a path's time goes
 * when the two cores are shared. The COPY paths have no service.
 */
type Cpu = { service: number; client: number; pg: number };
const cpu: Record<"http" | "copy" | "copy1", Cpu> = {
  http: { service: 0, client: 0, pg: 0 },
  copy: { service: 0, client: 0, pg: 0 },
  copy1: { service: 0, client: 0, pg: 0 },
};
const backend = await copyPool.query<{ pid: number }>("SELECT pg_backend_pid() AS pid");
const postmaster = postmasterOf(backend.rows[0]?.pid ?? 0);
const separateService = !args["in-process"];
/** The service's CPU during the HTTP phases by thread name: its main thread against V8's helper threads. */
const threadTotals = new Map<string, number>();
async function measured(into: Cpu, phase: () => Promise<void>, withService = false): Promise<void> {
  const pg0 = serverCpuMs(postmaster);
  const client0 = ownCpuMs();
  const service0 = service.cpuMs();
  const threads0 = withService ? service.threadCpuMs() : new Map<string, number>();
  await phase();
  if (withService) {
    for (const [name, ms] of service.threadCpuMs()) threadTotals.set(name, (threadTotals.get(name) ?? 0) + ms - (threads0.get(name) ?? 0));
  }
  const client = ownCpuMs() - client0;
  // In `--in-process` mode the bench process is the service, its client included.
  if (withService && !separateService) into.service += client;
  else into.client += client;
  if (withService && separateService) into.service += service.cpuMs() - service0;
  into.pg += serverCpuMs(postmaster) - pg0;
}

try {
  const httpEntity = await createEntity("bench http");
  const copyEntity = await createEntity("bench copy parallel");
  const copy1Entity = await createEntity("bench copy single");

  // Warm-up, not measured: connections, plan caches, and the service's code compiled by V8's optimising
  // tiers as a long-running web process has it (`--warmup` rounds of concurrent full batches into an
  // entity of their own; a fresh process runs the ingest path in its baseline tiers for seconds).
  const warmEntity = await createEntity("bench warm-up");
  for (let round = 0; round < warmupRounds; round++) {
    const warm = Array.from({ length: concurrency }, (_, i) => makeBatch(`warm${round}b${i}`, shape));
    await Promise.all(warm.map((b) => postBatch(JSON.stringify({ entity_id: warmEntity.id, sources: b.sources }))));
  }
  const warm = makeBatch("warm", { ...shape, sources: 20 });
  await postBatch(JSON.stringify({ entity_id: httpEntity.id, sources: warm.sources }));
  await copyText(copyData(warm, copyEntity));
  latencies.length = 0;
  // The transaction times the service logs from here on are the measured batches'.
  await new Promise((resolve) => setTimeout(resolve, 200));
  const warmBatches = service.txMs.length;

  for (let round = 0; round < rounds; round++) {
    const batches = Array.from({ length: concurrency }, (_, i) => makeBatch(`r${round}b${i}`, shape));
    const bodies = batches.map((b) =>
      JSON.stringify({ entity_id: httpEntity.id, collection_run_id: `bench-${round}`, sources: b.sources }),
    );
    const parallelText = batches.map((b) => copyData(b, copyEntity));
    const singleText = Buffer.concat(batches.map((b) => copyData(b, copy1Entity)));
    totals.httpBytes += bodies.reduce((n, b) => n + Buffer.byteLength(b), 0);

    const phases = [
      () =>
        measured(
          cpu.http,
          async () => {
            const start = process.hrtime.bigint();
            const inserted = await Promise.all(bodies.map(postBatch));
            totals.httpSeconds += seconds(start);
            totals.httpRows += inserted.reduce((a, b) => a + b, 0);
          },
          true,
        ),
      () =>
        measured(cpu.copy, async () => {
          const start = process.hrtime.bigint();
          await Promise.all(parallelText.map(copyText));
          totals.copySeconds += seconds(start);
          totals.copyRows += concurrency * rowsPerBatch;
        }),
      () =>
        measured(cpu.copy1, async () => {
          const start = process.hrtime.bigint();
          await copyText(singleText);
          totals.copy1Seconds += seconds(start);
          totals.copy1Rows += concurrency * rowsPerBatch;
        }),
    ];
    // Alternate the order so neither path always writes into the larger table.
    for (const phase of round % 2 === 0 ? phases : [...phases].reverse()) await phase();
    process.stdout.write(`round ${round + 1}/${rounds} done\n`);
  }

  latencies.sort((a, b) => a - b);
  const p50 = latencies[Math.floor(latencies.length / 2)] ?? 0;
  const max = latencies.at(-1) ?? 0;
  const txMs = service.txMs.slice(warmBatches).sort((a, b) => a - b);
  const turnMs = service.turnMs.slice(warmBatches).sort((a, b) => a - b);
  const counted = await copyPool.query<{ n: string }>("SELECT count(*) AS n FROM content_store");
  const http = totals.httpRows / totals.httpSeconds;
  const copyParallel = totals.copyRows / totals.copySeconds;
  const copySingle = totals.copy1Rows / totals.copy1Seconds;
  const fastestCopy = Math.max(copyParallel, copySingle);
  const fmt = (n: number) => Math.round(n).toLocaleString("en-US");
  const perThousand = (ms: number, rows: number) => (Number.isNaN(ms) ? "n/a" : ((ms / rows) * 1000).toFixed(0));
  console.log(
    [
      "",
      `shape: ${rounds} rounds x ${concurrency} concurrent batches x ${shape.sources} sources x (1 + ${shape.comments} comments) = ${fmt(totals.httpRows)} rows per path`,
      `       source ~${shape.sourceWords} words, comment ~${shape.commentWords} words; ${(totals.httpBytes / rounds / concurrency / 1e6).toFixed(2)} MB JSON per batch`,
      `HTTP ingest       ${fmt(http)} rows/s  (${totals.httpSeconds.toFixed(2)} s, ${((totals.httpSeconds / rounds) * 1000).toFixed(0)} ms per round of ${concurrency} batches)`,
      `                  per batch request: p50 ${p50.toFixed(0)} ms, max ${max.toFixed(0)} ms`,
      `                  ingest transaction (from the service, incl. connection wait): p50 ${txMs[Math.floor(txMs.length / 2)] ?? 0} ms, max ${txMs.at(-1) ?? 0} ms`,
      `                  wait for one of the process's ingest writers (INGEST_WRITERS ${args.writers ?? "default"}): p50 ${turnMs[Math.floor(turnMs.length / 2)] ?? 0} ms, max ${turnMs.at(-1) ?? 0} ms`,
      `COPY, ${String(concurrency).padEnd(2)} streams  ${fmt(copyParallel)} rows/s  (${totals.copySeconds.toFixed(2)} s)`,
      `COPY, 1 stream    ${fmt(copySingle)} rows/s  (${totals.copy1Seconds.toFixed(2)} s)`,
      `ratio HTTP / fastest COPY = ${(http / fastestCopy).toFixed(3)}  (target >= 0.8)`,
      `CPU per 1,000 rows (${separateService ? "the web process" : "the bench process: service and client"} / the bench's client / the PostgreSQL server):`,
      `  HTTP              ${perThousand(cpu.http.service, totals.httpRows)} / ${perThousand(cpu.http.client, totals.httpRows)} / ${perThousand(cpu.http.pg, totals.httpRows)} ms`,
      `  COPY, ${String(concurrency).padEnd(2)} streams   - / ${perThousand(cpu.copy.client, totals.copyRows)} / ${perThousand(cpu.copy.pg, totals.copyRows)} ms`,
      `  COPY, 1 stream     - / ${perThousand(cpu.copy1.client, totals.copy1Rows)} / ${perThousand(cpu.copy1.pg, totals.copy1Rows)} ms`,
      `  HTTP, ${separateService ? "the web process" : "the bench process"} by thread: ${[...threadTotals]
        .filter(([, ms]) => ms > 0)
        .sort((a, b) => b[1] - a[1])
        .map(([name, ms]) => `${name} ${perThousand(ms, totals.httpRows)}`)
        .join(", ")} ms (V8Worker: V8's garbage collection and compiler threads)`,
      separateService ? `web process: ${procfileCommand("web").slice(1).join(" ")}; peak RSS ${service.peakRssMb().toFixed(0)} MB` : "",
      `rows in content_store: ${counted.rows[0]?.n}`,
    ].join("\n"),
  );
} finally {
  await service.close();
  await copyPool.end();
  const redis = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await redis
    .connect()
    .then(() => deleteKeys(redis, `${redisPrefix}:*`))
    .catch(() => 0);
  redis.disconnect();
  await dropDatabase(serverUrl, dbName);
}
