import { randomBytes } from "node:crypto";
import { parseArgs } from "node:util";
import { Queue } from "bullmq";
import { Redis } from "ioredis";
import pg from "pg";
import { ANALYSER_VERSION } from "../../src/insights/enrichment/opinions.js";
import { enrichThreadsOf } from "../../src/platform/config.js";
import { onServer, withDatabase } from "../../src/platform/database-admin.js";
import { queuePrefix } from "../../src/platform/queues.js";
import { bearer } from "../lib/bearer.js";
import { type CpuQuota, cpuQuota } from "../lib/cgroup.js";
import { cpuMs, postmasterOf, serverCpuMs } from "../lib/proc.js";
import { exitCode, freePort, procfileCommand, runEntry, runProcess, sampleRss, startRedis, waitFor } from "../load/services.js";
import { feedbackTexts } from "../quality/feedback/data/convert.js";

/**
 * Enrichment keeping up with ingest, end to end, as production runs it: a fresh database, a Redis of
 * the bench's own, the release step, the Procfile's web process and `--workers` Procfile worker
 * processes (compiled build). `--rows` originals are posted to `POST /agent/v1/ingest/content` in
 * batches of 500 on `--concurrency` connections, as an import would; every batch queues its rows for
 * enrichment (opinion units, feedback kind, embedding with the default local embedder). The bench
 * watches the enrichment queue in Redis (every 100 ms) until it holds no job, then counts the enriched
 * rows once (a count scans the table: polling it would add its own PostgreSQL CPU to the figures).
 *
 *   npx tsx bench/enrichment/pipeline.ts [--rows 100000] [--workers 1] [--threads N] [--chunk-rows N] [--enrich-jobs N] [--ingest-writers N] [--concurrency 4]
 *     [--worker-cores C] [--keep] [--reanalyse]
 *
 * Rows are real feedback: the labelled GitHub issues (title and markdown body as GitHub's API gives
 * them) and app reviews of bench/quality/feedback/data, taken in turn and repeated with ids of their
 * own (a repeated text is analysed again like any new row). Prints ingest rows/s, enrichment rows/s
 * from the first batch to the last row enriched, how long after the last batch the last row was
 * enriched (target: a 100,000-row import fully enriched within 60 s of its last batch), the sustained rate
 * after the last batch (the enrichment alone on the machine; target 2,000 rows/s), the CPU per
 * 1,000 rows of the workers, the web process and the PostgreSQL server, and the workers' peak RSS.
 *
 * `--worker-cores C` gives each worker process a CPU quota of C cores (a control group; Linux, as root), so
 * that on one small machine worker processes stand for processes with cores of their own: with C well below
 * what the database leaves free, `--workers 1` against `--workers 2` shows how the rate grows with processes.
 * `MALLOC_ARENA_MAX`, when set for the bench, is passed on to the web and worker processes.
 */
const { values: args } = parseArgs({
  options: {
    rows: { type: "string", default: "100000" },
    workers: { type: "string", default: "1" },
    concurrency: { type: "string", default: "4" },
    threads: { type: "string" },
    /** The workers' ENRICH_CHUNK_ROWS (default: the service's own). */
    "chunk-rows": { type: "string" },
    // Enrichment jobs a worker process runs at once (WORKER_QUEUE_CONCURRENCY's enrichment entry; default WORKER_CONCURRENCY).
    "enrich-jobs": { type: "string" },
    /** The web process's INGEST_WRITERS (default: the service's own). */
    "ingest-writers": { type: "string" },
    /** A CPU quota per worker process, in cores (e.g. 0.4). */
    "worker-cores": { type: "string" },
    /** Leave the bench's database in place (its name is printed) to look at its rows and statements afterwards. */
    keep: { type: "boolean", default: false },
    /**
     * Then, as after a deploy that changed the analyser: every stored unit marked as the previous version's,
     * `npm run admin -- reanalyse <entity>` run as an operator runs it, and the re-analysis timed to its end.
     */
    reanalyse: { type: "boolean", default: false },
    "database-url": { type: "string", default: process.env.DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres" },
  },
});
const ROWS = Number(args.rows);
const WORKERS = Number(args.workers);
const CONCURRENCY = Number(args.concurrency);
const BATCH = 500;
const SECRET = "bench-enrichment-secret-0123456789";
const log = (line = "") => process.stdout.write(`${line}\n`);

const texts = feedbackTexts();

function batchBody(entityId: string, from: number) {
  const sources = [];
  for (let i = from; i < Math.min(ROWS, from + BATCH); i++) {
    const t = texts[i % texts.length]!;
    sources.push({ id: `row-${i}`, title: t.title, content: t.content, platform: t.platform, url: `https://example.com/feedback/${i}` });
  }
  return JSON.stringify({ entity_id: entityId, sources });
}

const stamp = randomBytes(4).toString("hex");
const dbName = `res_bench_enrich_${stamp}`;
const serverUrl = args["database-url"] as string;
const dbUrl = withDatabase(serverUrl, dbName);
const redis = await startRedis();
await onServer(serverUrl, (c) => c.query(`CREATE DATABASE "${dbName}"`));
const port = await freePort();
const env: Record<string, string> = {
  NODE_ENV: "production",
  HOST: "127.0.0.1",
  PORT: String(port),
  DATABASE_URL: dbUrl,
  REDIS_URL: redis.url,
  REDIS_PREFIX: "enrich",
  AUTH_JWT_SECRET: SECRET,
  LOG_LEVEL: "warn",
  RATE_LIMIT_PER_MINUTE: "0",
  // glibc's bound on malloc arenas, passed on when set for the bench (docs/operations.md, "Worker memory").
  ...(process.env.MALLOC_ARENA_MAX ? { MALLOC_ARENA_MAX: process.env.MALLOC_ARENA_MAX } : {}),
  // The workers' analysis threads: the production default (one per core) unless --threads names a count.
  ...(args.threads !== undefined ? { ENRICH_THREADS: args.threads } : {}),
  ...(args["chunk-rows"] !== undefined ? { ENRICH_CHUNK_ROWS: args["chunk-rows"] } : {}),
  ...(args["enrich-jobs"] !== undefined ? { WORKER_QUEUE_CONCURRENCY: `enrichment=${args["enrich-jobs"]}` } : {}),
  ...(args["ingest-writers"] !== undefined ? { INGEST_WRITERS: args["ingest-writers"] } : {}),
};
const procs = [];
const quotas: CpuQuota[] = [];
const pool = new pg.Pool({ connectionString: dbUrl, max: 1 });
const queueConnection = new Redis(redis.url, { maxRetriesPerRequest: null });
const queue = new Queue("enrichment", { connection: queueConnection, prefix: queuePrefix(env.REDIS_PREFIX!, "enrichment", false) });
/** Units not written by the current analyser. */
const staleUnits = async () =>
  Number(
    (await pool.query<{ n: string }>("SELECT count(*)::text AS n FROM opinion_units WHERE analyser_version <> $1", [ANALYSER_VERSION]))
      .rows[0]!.n,
  );

/**
 * Re-analysis of the import: its units marked as the previous analyser's (one statement; the roll-ups follow
 * through the units' update trigger) and the tables vacuumed, then the operator command, the queue watched until it is empty and no stale
 * unit is left. Prints rows/s, CPU per 1,000 rows and whether the roll-ups still equal a recount.
 */
async function timeReanalysis(
  entityId: string,
  workerPids: number[],
  webPid: number,
  postmaster: Parameters<typeof serverCpuMs>[0],
  open: () => Promise<number>,
  env: Record<string, string>,
) {
  await pool.query("UPDATE opinion_units SET analyser_version = analyser_version - 1");
  // That update leaves a dead version of every unit and roll-up: vacuumed first, so the figures are the
  // re-analysis's and not the clean-up of a rewrite a real deploy never makes.
  await pool.query("VACUUM (ANALYZE) opinion_units, opinion_rollups, opinion_source_rollups, content_store");
  const cpu0 = { workers: cpuMs(workerPids), web: cpuMs([webPid]), pg: serverCpuMs(postmaster) };
  const started = performance.now();
  const admin = runProcess("admin", [process.execPath, "--import", "tsx", "scripts/admin.ts", "reanalyse", entityId], env);
  if ((await exitCode(admin)) !== 0) throw new Error(`reanalyse failed:\n${admin.output.join("")}`);
  log(`reanalyse: ${admin.output.join("").trim()} (${((performance.now() - started) / 1000).toFixed(1)} s to queue)`);
  const deadline = performance.now() + 30 * 60_000;
  // The queue is watched in Redis; the units are counted (a scan PostgreSQL would bill to the re-analysis) only once it is empty.
  for (;;) {
    if (performance.now() > deadline) throw new Error("re-analysis did not finish within 30 minutes");
    if ((await open()) === 0 && (await staleUnits()) === 0) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  const seconds = (performance.now() - started) / 1000;
  const per = (ms: number) => ((ms / ROWS) * 1000).toFixed(0);
  log(`re-analysis: ${ROWS} rows in ${seconds.toFixed(1)} s = ${(ROWS / seconds).toFixed(0)} rows/s`);
  log(
    `CPU per 1,000 rows re-analysed: workers ${per(cpuMs(workerPids) - cpu0.workers)} ms, web ${per(cpuMs([webPid]) - cpu0.web)} ms, ` +
      `PostgreSQL ${per(serverCpuMs(postmaster) - cpu0.pg)} ms`,
  );
  const differ = await pool.query<{ n: string }>(
    `WITH recount AS (
       SELECT entity_id, focus, name AS aspect, sides, count(*)::int AS sources
       FROM (SELECT u.content_id, u.entity_id, k.focus, k.name,
               (bool_or(k.complaint)::int + 2 * bool_or(k.praise)::int + 4 * bool_or(k.request)::int)::smallint AS sides
             FROM opinion_units u
               CROSS JOIN LATERAL opinion_source_keys(u.seen_at, u.aspect, u.terms, u.kind, u.sentiment_label, u.compared_with, u.churn) k
             GROUP BY u.content_id, u.entity_id, k.focus, k.name) per_original
       GROUP BY 1, 2, 3, 4),
     stored AS (SELECT entity_id, focus, aspect, sides, sources FROM opinion_source_rollups WHERE sources <> 0)
     SELECT ((SELECT count(*) FROM (SELECT * FROM recount EXCEPT SELECT * FROM stored) a)
           + (SELECT count(*) FROM (SELECT * FROM stored EXCEPT SELECT * FROM recount) b))::text AS n`,
  );
  log(`source roll-ups that differ from a recount of the units: ${differ.rows[0]!.n}`);
}

try {
  const release = runEntry("release", "scripts/migrate.ts", env);
  if ((await exitCode(release)) !== 0) throw new Error(`release failed:\n${release.output.join("")}`);
  const web = runProcess("web", procfileCommand("web"), env);
  // WORKER_NODE_OPTIONS reaches the workers only (e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof" to see where their CPU goes).
  const workerEnv = process.env.WORKER_NODE_OPTIONS ? { ...env, NODE_OPTIONS: process.env.WORKER_NODE_OPTIONS } : env;
  const workers = Array.from({ length: WORKERS }, (_, i) => runProcess(`worker-${i + 1}`, procfileCommand("worker"), workerEnv));
  procs.push(web, ...workers);
  if (args["worker-cores"] !== undefined) {
    for (const [i, worker] of workers.entries()) {
      const quota = cpuQuota(`res-bench-${stamp}-${i + 1}`, Number(args["worker-cores"]));
      quotas.push(quota);
      quota.add(worker.child.pid!);
    }
  }
  const base = `http://127.0.0.1:${port}`;
  await waitFor("the web process", async () => (await fetch(`${base}/agent/v1/health`)).status === 200);
  const token = await bearer(SECRET, "bench-enrichment");
  const headers = { Authorization: `Bearer ${token}`, "Content-Type": "application/json" };
  const entity = await fetch(`${base}/api/entities`, { method: "POST", headers, body: JSON.stringify({ name: "Bench Co" }) });
  if (entity.status !== 201) throw new Error(`entity: ${entity.status} ${await entity.text()}`);
  const entityId = ((await entity.json()) as { id: string }).id;
  const backend = await pool.query<{ pid: number }>("SELECT pg_backend_pid() AS pid");
  const postmaster = postmasterOf(backend.rows[0]!.pid);
  const enriched = async () =>
    Number(
      (await pool.query<{ n: string }>("SELECT count(*)::text AS n FROM content_enrichment WHERE enriched_at IS NOT NULL")).rows[0]!.n,
    );

  const chars = Array.from({ length: ROWS }, (_, i) => texts[i % texts.length]!).reduce((n, t) => n + t.title.length + t.content.length, 0);
  log(
    `${ROWS} rows (${(chars / ROWS).toFixed(0)} characters a row on average, real issues and app reviews), ` +
      `${WORKERS} worker process(es)${args["worker-cores"] ? ` of at most ${args["worker-cores"]} cores each` : ""}, ` +
      `ENRICH_THREADS ${args.threads ?? `default (${enrichThreadsOf({ ENRICH_THREADS: undefined, NODE_ENV: "production" })} here)`}: ${procfileCommand("worker").slice(1).join(" ")}`,
  );
  const rss = sampleRss(workers);
  const workerPids = workers.map((w) => w.child.pid!);
  const cpu0 = { workers: cpuMs(workerPids), web: cpuMs([web.child.pid!]), pg: serverCpuMs(postmaster) };
  const started = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < ROWS) {
        const from = next;
        next += BATCH;
        const res = await fetch(`${base}/agent/v1/ingest/content`, { method: "POST", headers, body: batchBody(entityId, from) });
        if (res.status !== 200) throw new Error(`ingest: ${res.status} ${(await res.text()).slice(0, 300)}`);
        await res.arrayBuffer();
      }
    }),
  );
  const ingested = performance.now();
  // One count when the last batch is stored: the rows enriched after it were enriched without ingest beside them.
  const enrichedAtIngestEnd = await enriched();
  const cpuAtIngestEnd = { workers: cpuMs(workerPids), pg: serverCpuMs(postmaster) };
  log(
    `ingest: ${ROWS} rows in ${((ingested - started) / 1000).toFixed(1)} s = ${((ROWS * 1000) / (ingested - started)).toFixed(0)} rows/s`,
  );
  const open = async () => Object.values(await queue.getJobCounts("waiting", "active", "prioritized")).reduce((a, b) => a + b, 0);
  const deadline = performance.now() + 30 * 60_000;
  for (;;) {
    while ((await open()) > 0) {
      if (performance.now() > deadline) throw new Error("enrichment did not finish within 30 minutes");
      await new Promise((r) => setTimeout(r, 100));
    }
    const done = await enriched();
    if (done === ROWS) break;
    // A job failed or waits for its next attempt (delayed jobs are not watched: the queue also holds the
    // scheduled retention pass): its rows are still to come.
    if (performance.now() > deadline) throw new Error(`enrichment stopped at ${done} of ${ROWS} rows`);
    await new Promise((r) => setTimeout(r, 1000));
  }
  const finished = performance.now();
  const cpuEnd = { workers: cpuMs(workerPids), web: cpuMs([web.child.pid!]), pg: serverCpuMs(postmaster) };
  const cpu = { workers: cpuEnd.workers - cpu0.workers, web: cpuEnd.web - cpu0.web, pg: cpuEnd.pg - cpu0.pg };
  rss.stop();
  const seconds = (finished - started) / 1000;
  log(`enrichment: ${ROWS} rows enriched ${seconds.toFixed(1)} s after the first batch = ${(ROWS / seconds).toFixed(0)} rows/s`);
  log(
    `  the last row enriched ${((finished - ingested) / 1000).toFixed(1)} s after the last batch was stored (target ≤ 60 s at 100,000 rows)`,
  );
  const after = ROWS - enrichedAtIngestEnd;
  const perAfter = (ms: number) => ((ms / after) * 1000).toFixed(0);
  log(
    `  sustained, after the last batch: ${after} rows in ${((finished - ingested) / 1000).toFixed(1)} s = ` +
      `${((after * 1000) / (finished - ingested)).toFixed(0)} rows/s (${enrichedAtIngestEnd} enriched while the import ran); ` +
      `CPU per 1,000 of them: workers ${perAfter(cpuEnd.workers - cpuAtIngestEnd.workers)} ms, PostgreSQL ${perAfter(cpuEnd.pg - cpuAtIngestEnd.pg)} ms`,
  );
  const per = (ms: number) => ((ms / ROWS) * 1000).toFixed(0);
  log(`CPU per 1,000 rows: workers ${per(cpu.workers)} ms, web ${per(cpu.web)} ms, PostgreSQL ${per(cpu.pg)} ms`);
  log(`worker peak RSS: ${workers.map((w) => `${w.name} ${rss.peak[w.name]?.toFixed(0)} MB`).join(", ")}`);
  const units = await pool.query<{ n: string }>("SELECT count(*)::text AS n FROM opinion_units");
  log(`opinion units stored: ${units.rows[0]!.n} (${(Number(units.rows[0]!.n) / ROWS).toFixed(2)} a row)`);
  if (args.reanalyse) await timeReanalysis(entityId, workerPids, web.child.pid!, postmaster, open, env);
} finally {
  await Promise.all(procs.map((p) => p.stop()));
  for (const quota of quotas) quota.remove();
  await pool.end();
  await queue.close();
  queueConnection.disconnect();
  await redis.stop();
  if (args.keep) log(`database kept: ${dbName}`);
  else await onServer(serverUrl, (c) => c.query(`DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`));
}
