import { type ChildProcess, fork } from "node:child_process";
import { randomBytes, randomUUID } from "node:crypto";
import { cpus, loadavg } from "node:os";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { recordJobEvent } from "../../src/delivery/webhooks/dispatch.js";
import { secretBinding } from "../../src/delivery/webhooks/service.js";
import { generateSecret, messageIdOf } from "../../src/delivery/webhooks/signing.js";
import type { JobEvent } from "../../src/jobs/events.js";
import { concurrencyOf, loadConfig } from "../../src/platform/config.js";
import { dropDatabase, onServer, withDatabase } from "../../src/platform/database-admin.js";
import { type AppDeps, closeDeps, createDeps } from "../../src/platform/deps.js";
import { MIGRATIONS_DIR, migrate } from "../../src/platform/migrate.js";
import { deleteKeys, whenReady } from "../../src/platform/redis.js";
import { secretBoxFor } from "../../src/platform/secrets.js";
import { startHealthy, startSilent } from "./receivers.js";

/**
 * Webhook fairness: one workspace with 40 endpoints that accept the connection and never answer
 * gets a burst of job ends (20 events: 800 deliveries, each attempt waiting out WEBHOOK_TIMEOUT_MS,
 * 10 s), while another workspace with one healthy endpoint gets a job end every 100 ms. Printed per
 * phase: the healthy workspace's latency from the event recorded (`recordJobEvent`, as the job
 * lifecycle calls it) to the healthy receiver having it, and the most attempts the slow endpoints
 * held open at once (in all, and on one endpoint).
 *
 * Two phases in one run, each with a fresh Redis prefix and fresh workspaces, each served by a real
 * worker process (`workers/index.ts`, the Procfile's, with the webhook queue's default concurrency):
 * 1. limits off: no endpoint or workspace concurrency limit, no circuit breaker (as before them);
 * 2. the defaults: 2 attempts per endpoint, 4 per workspace, the breaker at 5 failures.
 *
 * The 40 endpoints are written straight into the database: registration allows 20 per workspace,
 * and endpoints registered before that limit existed stay.
 *
 *   npx tsx bench/webhooks/index.ts [--slow-endpoints 40] [--burst 20] [--seconds 20] [--interval 100]
 */
const { values: args } = parseArgs({
  options: {
    "slow-endpoints": { type: "string", default: "40" },
    burst: { type: "string", default: "20" },
    seconds: { type: "string", default: "20" },
    interval: { type: "string", default: "100" },
    "database-url": { type: "string", default: process.env.DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres" },
    "redis-url": { type: "string", default: process.env.REDIS_URL ?? "redis://127.0.0.1:6379" },
  },
});
const SLOW_ENDPOINTS = Number(args["slow-endpoints"]);
const BURST = Number(args.burst);
const SECONDS = Number(args.seconds);
const INTERVAL_MS = Number(args.interval);
/** How long after the last healthy event its deliveries may still arrive. */
const TAIL_MS = 10_000;

const stamp = randomBytes(4).toString("hex");
const serverUrl = args["database-url"] as string;
const dbName = `res_bench_webhooks_${stamp}`;
const databaseUrl = withDatabase(serverUrl, dbName);
const root = fileURLToPath(new URL("../../", import.meta.url));
const now = () => performance.timeOrigin + performance.now();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

const baseEnv = {
  NODE_ENV: "production",
  DATABASE_URL: databaseUrl,
  REDIS_URL: args["redis-url"] as string,
  AUTH_JWT_SECRET: "bench-webhooks-secret-0123456789",
  SECRETS_KEY: "bench-webhooks-secrets-key-0123456789",
  WEBHOOK_ALLOW_PRIVATE_URLS: "true",
  ROUTINES_ENABLED: "false",
  LOG_LEVEL: "error",
};
const PHASES: { name: string; env: Record<string, string> }[] = [
  {
    name: "limits off",
    env: {
      WEBHOOK_ENDPOINT_CONCURRENCY: "0",
      WEBHOOK_WORKSPACE_CONCURRENCY: "0",
      WEBHOOK_PAUSE_AFTER_FAILURES: "0",
      WEBHOOK_DISABLE_AFTER_FAILURES: "0",
    },
  },
  { name: "defaults", env: {} },
];

const children: ChildProcess[] = [];
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    for (const child of children) child.kill("SIGKILL");
    process.exit(130);
  });
}

async function stop(child: ChildProcess) {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGTERM");
  await Promise.race([exited, sleep(3000)]);
  if (child.exitCode === null) child.kill("SIGKILL");
}

const event = (workspaceId: string): JobEvent => ({
  kind: "collection_job",
  id: randomUUID(),
  workspaceId,
  status: "completed",
  occurredAt: new Date(),
  data: { entity_id: randomUUID() },
});

/** A slow workspace with its never-answering endpoints and a healthy one with one endpoint. */
async function seed(deps: AppDeps, silentBase: string, healthyBase: string) {
  const box = secretBoxFor(deps.config);
  if (!box) throw new Error("SECRETS_KEY is set for the bench");
  const endpoint = (workspaceId: string, url: string) => {
    const id = randomUUID();
    return { id, workspaceId, url, secretSealed: box.seal(generateSecret(), secretBinding(id)) };
  };
  const slow = await deps.db.workspace.create({ data: { name: "bench slow" } });
  const healthy = await deps.db.workspace.create({ data: { name: "bench healthy" } });
  await deps.db.webhookEndpoint.createMany({
    data: [
      ...Array.from({ length: SLOW_ENDPOINTS }, (_, i) => endpoint(slow.id, `${silentBase}/slow/${i}`)),
      endpoint(healthy.id, `${healthyBase}/hooks`),
    ],
  });
  return { slowId: slow.id, healthyId: healthy.id };
}

/** Nearest-rank percentile; an undelivered event counts as slower than any delivered one. */
function percentile(sorted: number[], p: number): string {
  const value = sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
  return Number.isFinite(value) ? `${Math.round(value)} ms` : `> ${TAIL_MS / 1000} s (not delivered)`;
}

async function runPhase(index: number, phase: (typeof PHASES)[number], silent: Awaited<ReturnType<typeof startSilent>>) {
  const healthy = await startHealthy();
  const prefix = `bench-wh-${stamp}-${index}`;
  const env = { ...baseEnv, REDIS_PREFIX: prefix, ...phase.env };
  const deps = createDeps(loadConfig(env), "bench");
  const worker = fork("workers/index.ts", [], {
    cwd: root,
    env: { ...process.env, ...env },
    execArgv: ["--import", "tsx"],
    stdio: "inherit",
  });
  children.push(worker);
  try {
    await whenReady(deps.redis, 5000);
    const { slowId, healthyId } = await seed(deps, silent.base, healthy.base);
    // The worker is up once a first healthy delivery arrives.
    await recordJobEvent(deps, event(healthyId));
    const started = Date.now();
    while (healthy.arrivals.size === 0 && Date.now() - started < 60_000) await sleep(50);
    if (healthy.arrivals.size === 0) throw new Error("the worker delivered nothing within 60 s");
    silent.reset();

    const sent = new Map<string, number>();
    const pending: Promise<number>[] = [];
    const burst = (async () => {
      for (let i = 0; i < BURST; i++) await recordJobEvent(deps, event(slowId));
    })();
    const t0 = now();
    for (let n = 0; n * INTERVAL_MS < SECONDS * 1000; n++) {
      await sleep(t0 + n * INTERVAL_MS - now());
      const e = event(healthyId);
      sent.set(messageIdOf(e), now());
      pending.push(recordJobEvent(deps, e));
    }
    await Promise.all([burst, ...pending]);
    const tailEnd = now() + TAIL_MS;
    while ([...sent.keys()].some((id) => !healthy.arrivals.has(id)) && now() < tailEnd) await sleep(50);

    const latencies = [...sent].map(([id, at]) => (healthy.arrivals.get(id) ?? Number.POSITIVE_INFINITY) - at).sort((a, b) => a - b);
    const delivered = latencies.filter(Number.isFinite).length;
    const stats = silent.stats();
    const paused = await deps.db.webhookEndpoint.count({ where: { workspaceId: slowId, state: { not: "enabled" } } });
    console.log(
      `${phase.name.padEnd(10)}  healthy latency p50 ${percentile(latencies, 50)}, p99 ${percentile(latencies, 99)}, ` +
        `max ${percentile(latencies, 100)} (${delivered}/${sent.size} delivered); slow endpoints: at most ${stats.maxOpen} attempts ` +
        `open at once, at most ${stats.maxOpenPerPath} on one endpoint, ${stats.arrived} attempts in all, ${paused} endpoints paused`,
    );
  } finally {
    await stop(worker);
    await healthy.close();
    await deleteKeys(deps.redis, `${prefix}:*`);
    await closeDeps(deps);
  }
}

await onServer(serverUrl, (c) => c.query(`CREATE DATABASE "${dbName}"`));
const silent = await startSilent();
try {
  await migrate(databaseUrl, MIGRATIONS_DIR);
  const config = loadConfig(baseEnv);
  console.log(
    `webhook fairness: ${SLOW_ENDPOINTS} never-answering endpoints × ${BURST} job ends (${SLOW_ENDPOINTS * BURST} deliveries) beside ` +
      `1 healthy endpoint with a job end every ${INTERVAL_MS} ms for ${SECONDS} s; WEBHOOK_TIMEOUT_MS ${config.WEBHOOK_TIMEOUT_MS}, ` +
      `webhook worker concurrency ${concurrencyOf(config, "webhooks")}; ${cpus().length} CPUs, load average ${loadavg()
        .map((l) => l.toFixed(2))
        .join(" ")} at start`,
  );
  for (const [i, phase] of PHASES.entries()) await runPhase(i, phase, silent);
} finally {
  await silent.close();
  await dropDatabase(serverUrl, dbName);
}
process.exit(0);
