import { randomBytes } from "node:crypto";
import { once } from "node:events";
import type { AddressInfo } from "node:net";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { parseArgs } from "node:util";
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
import { postmasterOf, serverCpuMs } from "../lib/proc.js";
import { COPY_SQL, copyLines, makeBatch } from "./corpus.js";

/**
 * Ingest throughput through HTTP (POST /agent/v1/ingest/content: validation, dedup keys,
 * one transaction per batch, enrichment queued) beside a raw COPY of the same rows into
 * the same table, in the same run, on a fresh migrated database.
 *
 *   npx tsx bench/ingest/index.ts [--rounds 3] [--concurrency 10] [--sources 500] [--comments 5]
 *
 * Prints each path's rows/s, their ratio, and the CPU each path costs per 1,000 rows: this process
 * (the service, or the bench's COPY client) and the PostgreSQL server (when it runs on this machine).
 */
const { values: args } = parseArgs({
  options: {
    rounds: { type: "string", default: "3" },
    concurrency: { type: "string", default: "10" },
    sources: { type: "string", default: "500" },
    comments: { type: "string", default: "5" },
    "source-words": { type: "string", default: "250" },
    "comment-words": { type: "string", default: "40" },
    "database-url": { type: "string", default: "postgresql://postgres@127.0.0.1:5432/postgres" },
    "redis-url": { type: "string", default: "redis://127.0.0.1:6379" },
  },
});
const rounds = Number(args.rounds);
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

await onServer(serverUrl, (c) => c.query(`CREATE DATABASE "${dbName}"`));
await migrate(databaseUrl, MIGRATIONS_DIR);
const config = loadConfig({
  NODE_ENV: "production",
  DATABASE_URL: databaseUrl,
  DATABASE_POOL_SIZE: String(concurrency + 2),
  REDIS_URL: args["redis-url"],
  REDIS_PREFIX: `bench-${stamp}`,
  AUTH_JWT_SECRET: SECRET,
  LOG_LEVEL: "warn",
  RATE_LIMIT_PER_MINUTE: "0",
});
const deps = createDeps(config, "bench");
// Collect the ingest service's own timing of each batch's transaction.
const txMs: number[] = [];
deps.logger = pino(
  { level: "debug" },
  {
    write: (line: string) => {
      const entry = JSON.parse(line) as { msg?: string; txMs?: number; level: number };
      if (entry.msg === "ingest batch stored" && entry.txMs !== undefined) txMs.push(entry.txMs);
      else if (entry.level >= 40) process.stderr.write(line);
    },
  },
);
// As the web process does: queues created before the connection is ready would never start.
if (!(await whenReady(deps.redis, 5000))) throw new Error("Redis is not reachable");
const server = createApp(deps).listen(0, "127.0.0.1");
// As the web process does: idle keep-alive sockets outlive the client's, so reuse never races a close.
server.keepAliveTimeout = 65_000;
await once(server, "listening");
const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
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

async function copyText(text: string): Promise<void> {
  const client = await copyPool.connect();
  try {
    await pipeline(Readable.from([text]), client.query(copyFrom(COPY_SQL)));
  } finally {
    client.release();
  }
}

const rowsPerBatch = shape.sources * (1 + shape.comments);
const totals = { httpRows: 0, httpSeconds: 0, copyRows: 0, copySeconds: 0, copy1Rows: 0, copy1Seconds: 0, httpBytes: 0 };

/**
 * CPU (user + system, ms) of this process (the service and the bench's client) and of the
 * PostgreSQL server (`serverCpuMs`), summed per path: where a path's time goes when the two cores
 * are shared.
 */
const cpu = { http: { node: 0, pg: 0 }, copy: { node: 0, pg: 0 }, copy1: { node: 0, pg: 0 } };
const backend = await copyPool.query<{ pid: number }>("SELECT pg_backend_pid() AS pid");
const postmaster = postmasterOf(backend.rows[0]?.pid ?? 0);
const ownCpuMs = () => {
  const used = process.cpuUsage();
  return (used.user + used.system) / 1000;
};
async function measured(into: { node: number; pg: number }, phase: () => Promise<void>): Promise<void> {
  const pg0 = serverCpuMs(postmaster);
  const node0 = ownCpuMs();
  await phase();
  into.node += ownCpuMs() - node0;
  into.pg += serverCpuMs(postmaster) - pg0;
}

try {
  const httpEntity = await createEntity("bench http");
  const copyEntity = await createEntity("bench copy parallel");
  const copy1Entity = await createEntity("bench copy single");

  // Warm-up: one small batch each way (connections, JIT, plan caches), not measured.
  const warm = makeBatch("warm", { ...shape, sources: 20 });
  await postBatch(JSON.stringify({ entity_id: httpEntity.id, sources: warm.sources }));
  await copyText(copyLines(warm, copyEntity));

  for (let round = 0; round < rounds; round++) {
    const batches = Array.from({ length: concurrency }, (_, i) => makeBatch(`r${round}b${i}`, shape));
    const bodies = batches.map((b) =>
      JSON.stringify({ entity_id: httpEntity.id, collection_run_id: `bench-${round}`, sources: b.sources }),
    );
    const parallelText = batches.map((b) => copyLines(b, copyEntity));
    const singleText = batches.map((b) => copyLines(b, copy1Entity)).join("");
    totals.httpBytes += bodies.reduce((n, b) => n + Buffer.byteLength(b), 0);

    const phases = [
      () =>
        measured(cpu.http, async () => {
          const start = process.hrtime.bigint();
          const inserted = await Promise.all(bodies.map(postBatch));
          totals.httpSeconds += seconds(start);
          totals.httpRows += inserted.reduce((a, b) => a + b, 0);
        }),
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

  latencies.splice(0, 1); // the warm-up batch
  latencies.sort((a, b) => a - b);
  const p50 = latencies[Math.floor(latencies.length / 2)] ?? 0;
  const max = latencies.at(-1) ?? 0;
  txMs.splice(0, 1);
  txMs.sort((a, b) => a - b);
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
      `COPY, ${String(concurrency).padEnd(2)} streams  ${fmt(copyParallel)} rows/s  (${totals.copySeconds.toFixed(2)} s)`,
      `COPY, 1 stream    ${fmt(copySingle)} rows/s  (${totals.copy1Seconds.toFixed(2)} s)`,
      `ratio HTTP / fastest COPY = ${(http / fastestCopy).toFixed(3)}  (target >= 0.8)`,
      `CPU per 1,000 rows (this process: the service and the client / the PostgreSQL server): ` +
        `HTTP ${perThousand(cpu.http.node, totals.httpRows)} / ${perThousand(cpu.http.pg, totals.httpRows)} ms, ` +
        `COPY ${concurrency} streams ${perThousand(cpu.copy.node, totals.copyRows)} / ${perThousand(cpu.copy.pg, totals.copyRows)} ms, ` +
        `COPY 1 stream ${perThousand(cpu.copy1.node, totals.copy1Rows)} / ${perThousand(cpu.copy1.pg, totals.copy1Rows)} ms`,
      `rows in content_store: ${counted.rows[0]?.n}`,
    ].join("\n"),
  );
} finally {
  server.close();
  await copyPool.end();
  await deleteKeys(deps.redis, `${config.REDIS_PREFIX}:*`).catch(() => 0);
  await closeDeps(deps);
  await dropDatabase(serverUrl, dbName);
}
