/**
 * Mixed load against the service as `npm start` runs it.
 *
 *   npx tsx bench/load/index.ts [--seconds 60] [--users 40] [--node-defaults] [--cluster] [--processes N]
 *
 * Starts a redis-server of its own and a fresh database (`res_load_<stamp>` on
 * DATABASE_URL's server, dropped afterwards), runs the release step (migrations), then the
 * Procfile's `web` and `worker` commands with the service's environment (`--node-defaults`
 * drops the web command's V8 heap flags, for comparison). Seeds `--users` users (an
 * entity, 10 saved pages and 20 stored sources each), then runs for `--seconds` at once:
 * content ingest, search, context recall, analysis runs streamed to their result event,
 * collection job creation (collected by the worker from a local Hacker News API), and one
 * API key deliberately kept over its rate limit. Prints throughput, latency percentiles,
 * error counts and the web and worker processes' peak RSS, then waits for the worker to
 * finish the queued work and reports it.
 *
 * `--cluster` runs the same workload twice in one run, first on a single redis-server and then
 * on a local three-master Redis Cluster (three masters, one replica each, built from the
 * machine's redis-server), and prints both passes' throughput and errors side by side.
 * `--processes N` runs N web and N worker processes (default 1, or 2 with `--cluster`); the
 * workloads are spread over the web processes.
 */
import { randomBytes } from "node:crypto";
import autocannon from "autocannon";
import pg from "pg";
import { dropDatabase, onServer, withDatabase } from "../../src/platform/database-admin.js";
import { startRedisCluster } from "../../test/support/redis-cluster.js";
import {
  exitCode,
  freePort,
  procfileCommand,
  rssMb,
  runEntry,
  runProcess,
  sampleRss,
  startHackerNews,
  startRedis,
  waitFor,
} from "./services.js";
import { seed, workloads } from "./workloads.js";

const args = process.argv.slice(2);
const arg = (name: string, fallback: number) => (args.includes(name) ? Number(args[args.indexOf(name) + 1]) || fallback : fallback);
const SECONDS = arg("--seconds", 60);
const USERS = arg("--users", 40);
/** `--node-defaults`: the web process without the Procfile's V8 heap flags, for comparison. */
const NODE_DEFAULTS = args.includes("--node-defaults");
/** `--cluster`: a single-node pass, then a Redis Cluster pass, compared. */
const CLUSTER = args.includes("--cluster");
const PROCESSES = arg("--processes", CLUSTER ? 2 : 1);
const RATE_LIMIT = 1200;
const SECRET = `load-${randomBytes(16).toString("hex")}`;
const log = (line = "") => process.stdout.write(`${line}\n`);

const serverUrl = process.env.DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";
let dbName = "";
let dbUrl = "";

type RedisMode = "single" | "cluster";
interface PassSummary {
  mode: RedisMode;
  total: number;
  rps: number;
  errors: number;
  limited: number;
  p99: number;
  drainSeconds: number;
  open: number;
}

async function counts(sql: string): Promise<Record<string, number>> {
  const client = new pg.Client({ connectionString: dbUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ k: string; n: number }>(sql);
    return Object.fromEntries(rows.map((r) => [r.k, Number(r.n)]));
  } finally {
    await client.end();
  }
}

async function startRedisFor(mode: RedisMode): Promise<{ url: string; stop: () => Promise<void> }> {
  if (mode === "single") return startRedis();
  const cluster = await startRedisCluster({ masters: 3, replicasPerMaster: 1 });
  return { url: cluster.url, stop: cluster.stop };
}

async function runPass(mode: RedisMode): Promise<PassSummary> {
  log(
    `\n## ${mode === "single" ? "single Redis node" : "Redis Cluster (3 masters + 3 replicas)"}, ${PROCESSES} web + ${PROCESSES} worker process(es)`,
  );
  dbName = `res_load_${Date.now().toString(36)}`;
  dbUrl = withDatabase(serverUrl, dbName);
  const redis = await startRedisFor(mode);
  const hn = await startHackerNews(5);
  await onServer(serverUrl, (c) => c.query(`CREATE DATABASE "${dbName}"`));
  const ports = await Promise.all(Array.from({ length: PROCESSES }, () => freePort()));
  const port = ports[0]!;
  const env: Record<string, string> = {
    NODE_ENV: "production",
    HOST: "127.0.0.1",
    PORT: String(port),
    DATABASE_URL: dbUrl,
    DATABASE_POOL_SIZE: "20",
    REDIS_URL: redis.url,
    REDIS_PREFIX: "load",
    AUTH_JWT_SECRET: SECRET,
    SECRETS_KEY: `${SECRET}-box`,
    LOG_LEVEL: "warn",
    RATE_LIMIT_PER_MINUTE: String(RATE_LIMIT),
    HACKERNEWS_API_URL: hn.url,
    COLLECTOR_ALLOW_PRIVATE_URLS: "true",
    COLLECTOR_MAX_PAGES: "1",
    COLLECTOR_REQUESTS_PER_SECOND: "100",
    WORKER_CONCURRENCY: "4",
    ADMIN_USER: "load",
    ADMIN_PASSWORD: SECRET,
  };
  const base = `http://127.0.0.1:${port}`;
  const procs = [];
  try {
    const release = runEntry("release", "scripts/migrate.ts", env);
    if ((await exitCode(release)) !== 0) throw new Error(`release failed:\n${release.output.join("")}`);
    const webCommand = procfileCommand("web").filter((a) => !(NODE_DEFAULTS && /^--max-(old|semi)-space-size=/.test(a)));
    const extra = process.env.LOAD_WEB_NODE_OPTIONS;
    const webs = ports.map((p, i) =>
      runProcess(i === 0 ? "web" : `web-${i + 1}`, webCommand, { ...env, PORT: String(p), ...(extra ? { NODE_OPTIONS: extra } : {}) }),
    );
    const workers = ports.map((_, i) => runProcess(i === 0 ? "worker" : `worker-${i + 1}`, procfileCommand("worker"), env));
    const [web, worker] = [webs[0]!, workers[0]!];
    procs.push(...webs, ...workers);
    for (const p of ports) {
      await waitFor("the web process", async () => (await fetch(`http://127.0.0.1:${p}/agent/v1/health`)).status === 200);
    }
    const rss = sampleRss([web, worker]);
    // The web process's own view of its memory (prom-client's default metrics), once a second.
    const heap = { used: 0, total: 0, external: 0 };
    const auth = `Basic ${Buffer.from(`load:${SECRET}`).toString("base64")}`;
    const metric = (text: string, name: string) =>
      Number(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, "m").exec(text)?.[1] ?? 0) / 1048576;
    const heapTimer = setInterval(async () => {
      const text = await fetch(`${base}/metrics`, { headers: { authorization: auth } })
        .then((r) => r.text())
        .catch(() => "");
      heap.used = Math.max(heap.used, metric(text, "nodejs_heap_size_used_bytes"));
      heap.total = Math.max(heap.total, metric(text, "nodejs_heap_size_total_bytes"));
      heap.external = Math.max(heap.external, metric(text, "nodejs_external_memory_bytes"));
    }, 1000);

    log(`seeding ${USERS} users ...`);
    const seeded = await seed(base, SECRET, USERS);
    const idle = { web: rssMb(web.child.pid), worker: rssMb(worker.child.pid) };
    log(`after seeding: web RSS ${idle.web.toFixed(0)} MB, worker RSS ${idle.worker.toFixed(0)} MB`);

    log(`running the mixed workload for ${SECONDS} s; web: ${webCommand.slice(1).join(" ")} ...`);
    // With several web processes, workload i goes to web process i mod N.
    const perWeb = ports.map((p) => workloads(`http://127.0.0.1:${p}`, seeded, SECONDS));
    const planned = perWeb[0]!.map((w, i) => perWeb[i % ports.length]![i] ?? w);
    const started = Date.now();
    const results = await Promise.all(planned.map((w) => autocannon(w.options)));
    const elapsed = (Date.now() - started) / 1000;
    const peakDuringLoad = { ...rss.peak };

    log();
    log("| workload | requests | req/s | p50 ms | p90 ms | p99 ms | max ms | statuses | errors |");
    log("|---|---|---|---|---|---|---|---|---|");
    let total = 0;
    let errors = 0;
    let limited = 0;
    let p99 = 0;
    for (const [i, w] of planned.entries()) {
      const r = results[i] as autocannon.Result & { statusCodeStats?: Record<string, { count: number }> };
      const statuses = Object.entries(r.statusCodeStats ?? {}).map(([code, s]) => [Number(code), Number(s.count)] as const);
      const unexpected = statuses.filter(([code]) => !w.expected.includes(code)).reduce((n, [, c]) => n + c, 0);
      const failed = unexpected + r.errors + r.timeouts;
      const done = statuses.reduce((n, [, c]) => n + c, 0);
      total += done;
      errors += failed;
      limited += statuses.filter(([code]) => code === 429).reduce((n, [, c]) => n + c, 0);
      p99 = Math.max(p99, r.latency.p99);
      log(
        `| ${w.name} | ${done} | ${(done / elapsed).toFixed(1)} | ${r.latency.p50} | ${r.latency.p90} | ${r.latency.p99} | ${r.latency.max} | ${statuses.map(([c, n]) => `${c}×${n}`).join(" ")} | ${failed}${r.timeouts ? ` (${r.timeouts} timeouts)` : ""} |`,
      );
    }
    log();
    log(
      `total: ${total} requests in ${elapsed.toFixed(1)} s = ${(total / elapsed).toFixed(1)} req/s; errors ${errors}; deliberate 429s ${limited}`,
    );
    log(
      `peak RSS during the run: web ${peakDuringLoad.web?.toFixed(0)} MB (target ≤ 256), worker ${peakDuringLoad.worker?.toFixed(0)} MB (target ≤ 450)`,
    );
    clearInterval(heapTimer);
    if (process.env.LOAD_WEB_NODE_OPTIONS?.includes("heapsnapshot-signal")) {
      web.child.kill("SIGUSR2");
      log("asked the web process for a heap snapshot (written to its working directory)");
    }
    log(
      `web process heap (peaks, from /metrics): used ${heap.used.toFixed(0)} MB, total ${heap.total.toFixed(0)} MB, external ${heap.external.toFixed(0)} MB`,
    );

    // The worker finishes what was queued; nothing is left behind.
    const drainStart = Date.now();
    const unfinished = async () => {
      const jobs = await counts("SELECT status AS k, count(*) AS n FROM collection_jobs GROUP BY status");
      const analyses = await counts("SELECT status AS k, count(*) AS n FROM analyses GROUP BY status");
      const pending = await counts(
        "SELECT 'rows' AS k, count(*) AS n FROM content_store c LEFT JOIN content_enrichment e ON e.content_id = c.id WHERE e.enriched_at IS NULL",
      );
      return {
        jobs,
        analyses,
        open: (jobs.queued ?? 0) + (jobs.running ?? 0) + (analyses.queued ?? 0) + (analyses.running ?? 0) + (pending.rows ?? 0),
      };
    };
    await waitFor("the worker to finish the queued work", async () => (await unfinished()).open === 0, 180_000).catch(() => undefined);
    const after = await unfinished();
    const enrichment = await counts(
      "SELECT (e.enriched_at IS NOT NULL)::text AS k, count(*) AS n FROM content_store c LEFT JOIN content_enrichment e ON e.content_id = c.id GROUP BY 1",
    );
    log(
      `after the run (${((Date.now() - drainStart) / 1000).toFixed(1)} s to drain): collection jobs ${JSON.stringify(after.jobs)}, analyses ${JSON.stringify(after.analyses)}, ` +
        `content rows enriched ${enrichment.true ?? 0} / not yet ${enrichment.false ?? 0}; upstream searches ${hn.searches()}`,
    );
    log(
      `peak RSS overall, with the drain: web ${rss.peak.web?.toFixed(0)} MB (target ≤ 256), worker ${rss.peak.worker?.toFixed(0)} MB (target ≤ 450)`,
    );
    rss.stop();
    if (errors > 0 || after.open > 0) process.exitCode = 1;
    return { mode, total, rps: total / elapsed, errors, limited, p99, drainSeconds: (Date.now() - drainStart) / 1000, open: after.open };
  } finally {
    for (const p of procs) await p.stop();
    await hn.close();
    await redis.stop();
    await dropDatabase(serverUrl, dbName).catch((err: unknown) => log(`could not drop ${dbName}: ${String(err)}`));
  }
}

async function main() {
  const summaries: PassSummary[] = [];
  for (const mode of CLUSTER ? (["single", "cluster"] as const) : (["single"] as const)) summaries.push(await runPass(mode));
  if (summaries.length < 2) return;
  log();
  log(`## single node vs Redis Cluster (${SECONDS} s each, ${USERS} users, ${PROCESSES} web + ${PROCESSES} worker processes)`);
  log();
  log("| Redis | requests | req/s | worst workload p99 ms | errors | deliberate 429s | drain s | left unfinished |");
  log("|---|---|---|---|---|---|---|---|");
  for (const s of summaries) {
    log(
      `| ${s.mode} | ${s.total} | ${s.rps.toFixed(1)} | ${s.p99} | ${s.errors} | ${s.limited} | ${s.drainSeconds.toFixed(1)} | ${s.open} |`,
    );
  }
}

await main();
