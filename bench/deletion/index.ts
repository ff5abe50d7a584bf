/**
 * Deleting an entity with 1,000,000 stored originals while other tenants ingest and search.
 *
 *   npx tsx bench/deletion/index.ts [--originals 1000000] [--reseed] [--baseline 30] [--control S]
 *     [--search-clients 4] [--search-every 500] [--ingest-clients 2] [--ingest-every 1000] [--ingest-sources 50]
 *
 *   --originals N       originals of the entity that is deleted (default 1,000,000; a fifth of them comments)
 *   --reseed            seed everything again (by default the other tenants are reused, and the target too
 *                       while it exists with N originals; a run deletes it, so the next run seeds it again)
 *   --baseline S        seconds of load measured before the deletion is requested (default 30; 5 s of warm-up before)
 *   --control S         no deletion: the "during" window is S seconds of the same load (what the load alone does
 *                       to its own latency over time, to set beside a deletion run's ratios)
 *   --search-clients C  concurrent search clients, each sending one search every --search-every ms (default 4 × 500 ms)
 *   --ingest-clients C  concurrent ingest clients, each posting one batch every --ingest-every ms (default 2 × 1000 ms)
 *   --ingest-sources K  sources per ingest batch (default 50, with the comments the generator gives them)
 *
 * Seeds a database of its own (`res_bench_deletion` on DATABASE_URL's server, created and migrated;
 * bench/deletion/corpus.ts): a workspace whose company holds N enriched originals with opinion units and
 * five analyses citing 200 of them, and a second workspace (the other tenants) with two companies of
 * 50,000 originals each, and a third (the writers, a third user) with one company that the load ingests into,
 * so the corpus the load searches does not grow while it runs. Starts the real web application on a local port (bench/lib/app.ts; REDIS_URL's
 * Redis, a prefix of its own) and, in a process of its own as in production, the worker's processors of
 * the `enrichment` queue (bench/deletion/worker.ts: `entity.delete.v1` and the enrichment of what is
 * ingested). The other tenants' load runs throughout, paced per client (a client that falls behind sends
 * its next request at once, never a burst): `POST /agent/v1/search` over their workspace (a rotation of
 * query classes) and `POST /agent/v1/ingest/content` batches to the writers' company. After the baseline,
 * the target's owner sends `DELETE /api/entities/{id}` and polls `GET /api/entities/{id}/deletion` every
 * 2 s until it is completed, with the load still running. Prints N, the deletion's time (the record's
 * finish minus its creation, and the client's wall clock), rows and opinion units deleted per second,
 * batches, and per operation p50/p95/p99 before and during the deletion, with the ratio of the p99s
 * against the target (at most 2×).
 */
import { type ChildProcess, fork } from "node:child_process";
import { randomBytes } from "node:crypto";
import { cpus, loadavg } from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { parseArgs } from "node:util";
import pg from "pg";
import { ensureDatabase, withDatabase } from "../../src/platform/database-admin.js";
import { closeDeps } from "../../src/platform/deps.js";
import { MIGRATIONS_DIR, migrate } from "../../src/platform/migrate.js";
import { deleteKeys } from "../../src/platform/redis.js";
import { generateRows } from "../intelligence/corpus.js";
import { type BenchApp, startBenchApp } from "../lib/app.js";
import { root } from "../load/services.js";
import { type Corpus, OWNER_SUB, seed, TENANT_SUB, WRITER_SUB } from "./corpus.js";

const { values: args } = parseArgs({
  options: {
    originals: { type: "string", default: "1000000" },
    reseed: { type: "boolean", default: false },
    baseline: { type: "string", default: "30" },
    control: { type: "string" },
    "search-clients": { type: "string", default: "4" },
    "search-every": { type: "string", default: "500" },
    "ingest-clients": { type: "string", default: "2" },
    "ingest-every": { type: "string", default: "1000" },
    "ingest-sources": { type: "string", default: "50" },
  },
});
const ORIGINALS = Number(args.originals);
const BASELINE_S = Number(args.baseline);
const CONTROL_S = args.control === undefined ? undefined : Number(args.control);
const WARMUP_S = 5;
const SEARCH_CLIENTS = Number(args["search-clients"]);
const SEARCH_EVERY = Number(args["search-every"]);
const INGEST_CLIENTS = Number(args["ingest-clients"]);
const INGEST_EVERY = Number(args["ingest-every"]);
const INGEST_SOURCES = Number(args["ingest-sources"]);
const POLL_MS = 2000;
const DELETION_TIMEOUT_MS = 3 * 3600_000;
const TARGET_RATIO = 2;
const SECRET = "bench-deletion-secret-0123456789abcdef";
const STAMP = randomBytes(4).toString("hex");

const serverUrl = process.env.DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";
const DB_URL = withDatabase(serverUrl, "res_bench_deletion");

const log = (line = "") => process.stdout.write(`${line}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const machine = () =>
  `${cpus().length} cores, load average ${loadavg()
    .map((x) => x.toFixed(1))
    .join(" ")}`;

interface Summary {
  n: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
}
function summary(samples: number[]): Summary {
  const sorted = [...samples].sort((a, b) => a - b);
  if (sorted.length === 0) return { n: 0, p50: Number.NaN, p95: Number.NaN, p99: Number.NaN, max: Number.NaN };
  const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number;
  return { n: sorted.length, p50: at(50), p95: at(95), p99: at(99), max: sorted.at(-1) as number };
}
const fmt = (s: Summary) =>
  `n=${String(s.n).padStart(5)}  p50 ${s.p50.toFixed(0).padStart(5)}  p95 ${s.p95.toFixed(0).padStart(5)}  p99 ${s.p99
    .toFixed(0)
    .padStart(5)}  max ${s.max.toFixed(0).padStart(5)} ms`;

/** Search query classes over the tenants' texts (bench/intelligence/corpus.ts): common word to rare phrase. */
const QUERIES = [
  "pricing",
  "sync slow",
  '"mobile app"',
  "export or onboarding",
  "keyboard shortcuts broken",
  '"billing portal"',
  "globex note",
  "dark mode excellent",
];

type Phase = "warmup" | "baseline" | "during" | "after";
type Op = "search" | "ingest";

interface Deletion {
  status: string;
  created_at: string;
  finished_at: string | null;
  error: string | null;
  progress: {
    originals_matched: number;
    remaining: number;
    rows_deleted: number;
    opinion_units_deleted: number;
    analyses_updated: number;
    knowledge_citations_cleared: number;
    batches: number;
    jobs_cancelled: number;
  };
  removed: Record<string, unknown>;
}

function startWorker(env: Record<string, string>): Promise<ChildProcess> {
  const child = fork(path.join(root, "bench/deletion/worker.ts"), [], {
    cwd: root,
    env: { ...process.env, ...env },
    execArgv: ["--import", "tsx"],
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("the worker process did not start within 60 s")), 60_000);
    child.once("message", () => {
      clearTimeout(timer);
      resolve(child);
    });
    child.once("exit", (code) => reject(new Error(`the worker process exited (${code}) before it was ready`)));
  });
}

async function main() {
  await ensureDatabase(DB_URL);
  await migrate(DB_URL, MIGRATIONS_DIR);
  const pool = new pg.Pool({ connectionString: DB_URL, max: 4 });
  const corpus: Corpus = await seed(pool, ORIGINALS, args.reseed ?? false);
  const sizes = (
    await pool.query<{ originals: string; comments: string; units: string; tenants: string; analyses: string }>(
      `SELECT (SELECT count(*) FROM content_store WHERE entity_id = $1)::text AS originals,
              (SELECT count(*) FROM content_store WHERE entity_id = $1 AND kind = 'comment')::text AS comments,
              (SELECT count(*) FROM opinion_units WHERE entity_id = $1)::text AS units,
              (SELECT count(*) FROM content_store WHERE workspace_id = $2)::text AS tenants,
              (SELECT count(*) FROM analyses WHERE entity_id = $1)::text AS analyses`,
      [corpus.targetId, corpus.tenantWorkspace],
    )
  ).rows[0];
  log(
    `target: ${sizes?.originals} originals (${sizes?.comments} comments), ${sizes?.units} opinion units, ${sizes?.analyses} analyses citing some; other tenants: ${sizes?.tenants} originals in ${corpus.tenantEntities.length} companies of another workspace (searched), and a third workspace's company (ingested into)`,
  );
  log(`machine: ${machine()} at start`);

  const app = await startBenchApp({ databaseUrl: DB_URL, secret: SECRET, redisPrefix: `bench-deletion-${STAMP}`, poolSize: 10 });
  app.server.keepAliveTimeout = 65_000;
  const worker = await startWorker({
    NODE_ENV: "production",
    DATABASE_URL: DB_URL,
    DATABASE_POOL_SIZE: "6",
    AUTH_JWT_SECRET: SECRET,
    LOG_LEVEL: "warn",
    REDIS_URL: app.config.REDIS_URL,
    REDIS_PREFIX: app.config.REDIS_PREFIX,
  });
  log(`web: this process (pool 10); worker: its own process, enrichment queue, batch size ${app.config.ERASURE_BATCH_SIZE}`);
  try {
    await measure(app, pool, corpus);
  } finally {
    worker.kill("SIGTERM");
    if (worker.exitCode === null && worker.signalCode === null) await new Promise((r) => worker.once("exit", r));
    app.server.closeAllConnections();
    app.server.close();
    await deleteKeys(app.deps.redis, `${app.config.REDIS_PREFIX}:*`).catch(() => 0);
    await closeDeps(app.deps);
    await pool.end();
  }
}

async function measure(app: BenchApp, pool: pg.Pool, corpus: Corpus): Promise<void> {
  const owner = { authorization: `Bearer ${await app.token(OWNER_SUB, "6h")}` };
  const tenant = { authorization: `Bearer ${await app.token(TENANT_SUB, "6h")}`, "content-type": "application/json" };
  const writer = { authorization: `Bearer ${await app.token(WRITER_SUB, "6h")}`, "content-type": "application/json" };

  let phase: Phase = "warmup";
  let running = true;
  const samples: Record<Op, Record<"baseline" | "during", number[]>> = {
    search: { baseline: [], during: [] },
    ingest: { baseline: [], during: [] },
  };
  const failures: Record<Op, number> = { search: 0, ingest: 0 };
  const firstFailure: Partial<Record<Op, string>> = {};
  let ingested = 0;
  let batchNo = 0;

  const search = async (i: number) => {
    const res = await fetch(`${app.base}/agent/v1/search`, {
      method: "POST",
      headers: tenant,
      body: JSON.stringify({ query: QUERIES[i % QUERIES.length] }),
    });
    const text = await res.text();
    if (res.status !== 200) throw new Error(`search answered ${res.status}: ${text.slice(0, 300)}`);
  };
  const ingest = async () => {
    const n = batchNo++;
    const rows = generateRows(900_000 + n, Math.ceil(INGEST_SOURCES * 1.4), 30, `hooli load ${n}`);
    const sources = rows
      .filter((r) => r.kind === "source")
      .slice(0, INGEST_SOURCES)
      .map((r) => ({
        id: `load-${STAMP}-${r.id}`,
        title: r.content.slice(0, 60),
        url: `https://example.com/${r.platform}/load-${r.id}`,
        platform: r.platform,
        content: r.content,
        author: `author-${r.id.slice(0, 6)}`,
        published_at: r.publishedAt,
        comments: rows
          .filter((c) => c.parentId === r.id)
          .map((c) => ({ id: `load-${STAMP}-${c.id}`, text: c.content, author: `author-${c.id.slice(0, 6)}` })),
      }));
    const res = await fetch(`${app.base}/agent/v1/ingest/content`, {
      method: "POST",
      headers: writer,
      body: JSON.stringify({ entity_id: corpus.writerEntityId, sources }),
    });
    const text = await res.text();
    if (res.status !== 200) throw new Error(`ingest answered ${res.status}: ${text.slice(0, 300)}`);
    ingested += (JSON.parse(text) as { inserted: number }).inserted;
  };

  /** One paced client: a request every `every` ms, each latency recorded under the phase it started in. */
  const client = async (op: Op, every: number, c: number, clients: number, send: (i: number) => Promise<void>) => {
    await sleep((c * every) / clients);
    let next = performance.now();
    for (let i = c; running; i++) {
      const at = phase;
      const t0 = performance.now();
      try {
        await send(i);
        if (at === "baseline" || at === "during") samples[op][at].push(performance.now() - t0);
      } catch (err) {
        failures[op]++;
        firstFailure[op] ??= (err as Error).message;
      }
      next += every;
      const wait = next - performance.now();
      if (wait > 0) await sleep(wait);
      else next = performance.now();
    }
  };
  const clients = [
    ...Array.from({ length: SEARCH_CLIENTS }, (_, c) => client("search", SEARCH_EVERY, c, SEARCH_CLIENTS, search)),
    ...Array.from({ length: INGEST_CLIENTS }, (_, c) => client("ingest", INGEST_EVERY, c, INGEST_CLIENTS, ingest)),
  ];
  log(
    `\nload: ${SEARCH_CLIENTS} search clients every ${SEARCH_EVERY} ms, ${INGEST_CLIENTS} ingest clients every ${INGEST_EVERY} ms (${INGEST_SOURCES} sources a batch); ${WARMUP_S} s warm-up, ${BASELINE_S} s baseline`,
  );

  let deletion: Deletion | undefined;
  let requestMs = 0;
  let wallMs = 0;
  let ingestedBefore = 0;
  try {
    await sleep(WARMUP_S * 1000);
    phase = "baseline";
    await sleep(BASELINE_S * 1000);
    phase = "during";
    ingestedBefore = ingested;
    if (CONTROL_S !== undefined) {
      log(`baseline done (${machine()}); control: ${CONTROL_S} s more of the same load, no deletion`);
      await sleep(CONTROL_S * 1000);
    } else {
      log(`baseline done (${machine()}); DELETE /api/entities/${corpus.targetId}`);
      const t0 = performance.now();
      const res = await fetch(`${app.base}/api/entities/${corpus.targetId}`, { method: "DELETE", headers: owner });
      const answer = await res.text();
      requestMs = performance.now() - t0;
      if (res.status !== 202) throw new Error(`DELETE answered ${res.status}: ${answer.slice(0, 500)}`);
      log(`  202 in ${requestMs.toFixed(0)} ms: ${(JSON.parse(answer) as Deletion).progress.originals_matched} originals matched`);
      let lastLog = t0;
      for (;;) {
        await sleep(POLL_MS);
        const poll = await fetch(`${app.base}/api/entities/${corpus.targetId}/deletion`, { headers: owner });
        const body = await poll.text();
        if (poll.status !== 200) throw new Error(`progress answered ${poll.status}: ${body.slice(0, 300)}`);
        deletion = JSON.parse(body) as Deletion;
        const now = performance.now();
        if (deletion.status === "completed") {
          wallMs = now - t0;
          break;
        }
        if (deletion.status === "failed") throw new Error(`the deletion failed: ${deletion.error}`);
        if (now - t0 > DELETION_TIMEOUT_MS) throw new Error("the deletion did not complete in time");
        if (now - lastLog >= 30_000) {
          lastLog = now;
          if (!deletion) throw new Error("no deletion was read");
          const p = deletion.progress;
          log(
            `  ${((now - t0) / 1000).toFixed(0).padStart(5)} s: ${p.rows_deleted} rows deleted in ${p.batches} batches (${(
              p.rows_deleted / ((now - t0) / 1000)
            ).toFixed(0)} rows/s), ${p.remaining} remaining; ${machine()}`,
          );
        }
      }
    }
  } finally {
    phase = "after";
    running = false;
    await Promise.all(clients);
  }

  const latencies = () => {
    log(
      `  other tenants ingested ${ingested} originals during the run (${ingested - ingestedBefore} during the ${CONTROL_S === undefined ? "deletion" : "control window"})`,
    );
    log(`  other tenants' latency, baseline vs during the ${CONTROL_S === undefined ? "deletion" : "control window (no deletion)"}:`);
    for (const op of ["search", "ingest"] as const) {
      const before = summary(samples[op].baseline);
      const during = summary(samples[op].during);
      const ratio = during.p99 / before.p99;
      const label = op === "search" ? "POST /agent/v1/search" : `POST /agent/v1/ingest/content (${INGEST_SOURCES} sources)`;
      log(`    ${label}`);
      log(`      baseline ${fmt(before)}`);
      log(`      during   ${fmt(during)}`);
      const verdict = `${op}: p99 ${before.p99.toFixed(0)} → ${during.p99.toFixed(0)} ms, ${ratio.toFixed(2)}× (${
        ratio <= TARGET_RATIO ? "within" : "ABOVE"
      } the ${TARGET_RATIO}× target); p50 ${(during.p50 / before.p50).toFixed(2)}×`;
      log(`      ${verdict}`);
      if (failures[op] > 0) log(`      ${failures[op]} failed requests; the first: ${firstFailure[op]}`);
    }
    log(`  machine: ${machine()} at the end`);
  };
  if (CONTROL_S !== undefined) {
    log("\nsummary (control run):");
    latencies();
    return;
  }
  if (!deletion) throw new Error("no deletion was read");
  const p = deletion.progress;
  const serverS = (Date.parse(deletion.finished_at as string) - Date.parse(deletion.created_at)) / 1000;
  const left = (
    await pool.query<{ rows: string; entity: string; tombstones: string }>(
      `SELECT (SELECT count(*) FROM content_store WHERE entity_id = $1)::text AS rows,
              (SELECT count(*) FROM entities WHERE id = $1)::text AS entity,
              (SELECT count(*) FROM content_deletions WHERE entity_id = $1)::text AS tombstones`,
      [corpus.targetId],
    )
  ).rows[0];

  log("\nsummary:");
  log(`  N = ${ORIGINALS} originals of one entity (${p.originals_matched} matched at the request)`);
  log(
    `  deletion: ${serverS.toFixed(1)} s (record created to finished; client wall clock ${(wallMs / 1000).toFixed(1)} s, polled every ${POLL_MS / 1000} s; the DELETE request itself ${requestMs.toFixed(0)} ms)`,
  );
  log(
    `  ${p.rows_deleted} rows deleted (${(p.rows_deleted / serverS).toFixed(0)} rows/s), ${p.opinion_units_deleted} opinion units (${(
      p.opinion_units_deleted / serverS
    ).toFixed(0)}/s), ${p.batches} batches of ${app.config.ERASURE_BATCH_SIZE} (${((serverS * 1000) / Math.max(1, p.batches)).toFixed(
      0,
    )} ms a batch), ${p.analyses_updated} analysis rewrites; after: ${left?.rows} rows and ${left?.entity} entity row left, ${left?.tombstones} tombstones`,
  );
  latencies();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
