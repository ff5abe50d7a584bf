import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { createServer } from "node:net";
import os from "node:os";
import { parseArgs } from "node:util";
import { Redis } from "ioredis";
import { commandArgv, ROOT, readProcfile } from "../../scripts/procfile.js";
import { dropDatabase, ensureDatabase, withDatabase } from "../../src/platform/database-admin.js";
import { MIGRATIONS_DIR, migrate } from "../../src/platform/migrate.js";

/**
 * Start-up time and idle memory of the web and worker processes, TypeScript through tsx (the commands
 * the Procfile ran before the compiled build) beside the compiled build in dist/ (the Procfile now).
 *
 *   npx tsx bench/startup/index.ts [--runs 3] [--idle-seconds 10] [--variants tsx,tsx-no-cache,dist,dist-no-source-maps]
 *
 * A throwaway database on DATABASE_URL's server (migrated once, dropped at the end), REDIS_URL with a
 * key prefix of its own (deleted at the end), and the README's local settings. Each run of a variant:
 * start the web process and poll `GET /agent/v1/health` every 20 ms until it answers 200 with status
 * ok (start-up = spawn to that answer); then start the worker and wait for its "worker started" line;
 * leave both idle for --idle-seconds, read VmRSS and VmHWM (peak) of each from /proc/<pid>/status,
 * stop both with SIGTERM. Variants take turns run by run, after one unrecorded warm-up start of each
 * (the file cache warm, as on a dyno that restarts). `tsx-no-cache` sets TSX_DISABLE_CACHE=1: tsx
 * compiles every file again, as on a freshly booted dyno whose file system starts empty.
 */
const { values } = parseArgs({
  options: {
    runs: { type: "string", default: "3" },
    "idle-seconds": { type: "string", default: "10" },
    variants: { type: "string", default: "tsx,tsx-no-cache,dist,dist-no-source-maps" },
  },
});
const runs = Number(values.runs);
const idleMs = Number(values["idle-seconds"]) * 1000;

interface Variant {
  name: string;
  web: string[];
  worker: string[];
  env?: Record<string, string>;
}

const procfile = (type: string) => {
  const command = readProcfile().get(type);
  if (!command) throw new Error(`the Procfile has no ${type} process`);
  return commandArgv(command);
};
const withoutSourceMaps = (argv: string[]) => argv.filter((arg) => arg !== "--enable-source-maps");
// The Procfile's web and worker lines before the compiled build (commit c963658), word for word.
const TSX_WEB = [process.execPath, "--max-old-space-size=224", "--max-semi-space-size=8", "--import", "tsx", "src/server.ts"];
const TSX_WORKER = [process.execPath, "--import", "tsx", "workers/index.ts"];
const VARIANTS: Record<string, Variant> = {
  tsx: { name: "tsx", web: TSX_WEB, worker: TSX_WORKER },
  "tsx-no-cache": { name: "tsx-no-cache", web: TSX_WEB, worker: TSX_WORKER, env: { TSX_DISABLE_CACHE: "1" } },
  dist: { name: "dist", web: procfile("web"), worker: procfile("worker") },
  "dist-no-source-maps": {
    name: "dist-no-source-maps",
    web: withoutSourceMaps(procfile("web")),
    worker: withoutSourceMaps(procfile("worker")),
  },
};
const variants = (values.variants ?? "").split(",").map((name) => {
  const variant = VARIANTS[name];
  if (!variant) throw new Error(`unknown variant ${name}; known: ${Object.keys(VARIANTS).join(", ")}`);
  return variant;
});

const serverUrl = process.env.DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";
const redisUrl = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const database = `res_bench_startup_${Date.now()}`;
const databaseUrl = withDatabase(serverUrl, database);
const prefix = `res-bench-startup-${process.pid}`;

async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const port = (probe.address() as { port: number }).port;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function memory(pid: number): { rss: number; hwm: number } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+)\\s+kB`, "m").exec(status)?.[1] ?? Number.NaN);
  return { rss: kb("VmRSS") / 1024, hwm: kb("VmHWM") / 1024 };
}

interface Started {
  child: ChildProcess;
  output: () => string;
  exited: Promise<void>;
}

function start(argv: string[], env: Record<string, string>): Started {
  const [program, ...args] = argv as [string, ...string[]];
  const child = spawn(program, args, { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout?.on("data", (chunk: Buffer) => (output += String(chunk)));
  child.stderr?.on("data", (chunk: Buffer) => (output += String(chunk)));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  return { child, output: () => output, exited };
}

async function stop(p: Started): Promise<void> {
  if (p.child.exitCode !== null || p.child.signalCode !== null) return;
  const timer = setTimeout(() => p.child.kill("SIGKILL"), 30_000);
  p.child.kill("SIGTERM");
  await p.exited;
  clearTimeout(timer);
}

async function until(what: string, p: Started, probe: () => Promise<boolean> | boolean, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (p.child.exitCode !== null) throw new Error(`${what}: the process exited (${p.child.exitCode}):\n${p.output().slice(-3000)}`);
    if (Date.now() > deadline) throw new Error(`${what}: timed out:\n${p.output().slice(-3000)}`);
    await sleep(20);
  }
}

interface Run {
  variant: string;
  webMs: number;
  workerMs: number;
  web: { rss: number; hwm: number };
  worker: { rss: number; hwm: number };
}

async function measure(variant: Variant): Promise<Run> {
  const port = await freePort();
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "",
    HOME: process.env.HOME ?? "",
    // The README's local settings.
    DATABASE_URL: databaseUrl,
    REDIS_URL: redisUrl,
    AUTH_JWT_SECRET: "change-me-local-development-secret",
    SECRETS_KEY: "change-me-local-secrets-key",
    ADMIN_USER: "admin",
    ADMIN_PASSWORD: "change-me-admin",
    HOST: "127.0.0.1",
    PORT: String(port),
    REDIS_PREFIX: prefix,
    ...variant.env,
  };
  const health = `http://127.0.0.1:${port}/agent/v1/health`;
  const webStarted = performance.now();
  const web = start(variant.web, env);
  let worker: Started | undefined;
  try {
    await until("web healthy", web, async () => {
      try {
        const res = await fetch(health, { signal: AbortSignal.timeout(2000) });
        return res.status === 200 && ((await res.json()) as { status?: string }).status === "ok";
      } catch {
        return false;
      }
    });
    const webMs = performance.now() - webStarted;
    const workerStarted = performance.now();
    worker = start(variant.worker, env);
    const w = worker;
    await until("worker started", w, () => w.output().includes('"msg":"worker started"'));
    const workerMs = performance.now() - workerStarted;
    await sleep(idleMs);
    return {
      variant: variant.name,
      webMs,
      workerMs,
      web: memory(web.child.pid as number),
      worker: memory(w.child.pid as number),
    };
  } finally {
    await Promise.all([stop(web), worker ? stop(worker) : Promise.resolve()]);
  }
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
};
const fmt = (n: number, digits = 0) => n.toFixed(digits);

async function main(): Promise<void> {
  // The compiled variants run what `npm run build` makes of the sources as they are now.
  if (variants.some((v) => v.name.startsWith("dist")))
    execFileSync(process.execPath, ["scripts/build.ts", "--if-stale"], { cwd: ROOT, stdio: "inherit" });
  await ensureDatabase(databaseUrl);
  const results: Run[] = [];
  const loadBefore = os.loadavg();
  try {
    await migrate(databaseUrl, MIGRATIONS_DIR);
    console.log(`node ${process.version}, ${os.cpus().length} CPUs, database ${database}, Redis prefix ${prefix}`);
    for (const variant of variants) {
      await measure(variant);
      console.log(`warm-up: ${variant.name}`);
    }
    for (let run = 1; run <= runs; run++) {
      for (const variant of variants) {
        const r = await measure(variant);
        results.push(r);
        console.log(
          `run ${run} ${r.variant.padEnd(20)} web healthy ${fmt(r.webMs).padStart(5)} ms, RSS ${fmt(r.web.rss)} MB (peak ${fmt(r.web.hwm)}); ` +
            `worker started ${fmt(r.workerMs).padStart(5)} ms, RSS ${fmt(r.worker.rss)} MB (peak ${fmt(r.worker.hwm)})`,
        );
      }
    }
  } finally {
    await dropDatabase(serverUrl, database);
    const redis = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
    try {
      await redis.connect();
      let cursor = "0";
      do {
        const [next, keys] = await redis.scan(cursor, "MATCH", `${prefix}:*`, "COUNT", 1000);
        cursor = next;
        if (keys.length > 0) await redis.del(...keys);
      } while (cursor !== "0");
    } finally {
      redis.disconnect();
    }
  }
  const loadAfter = os.loadavg();
  console.log(
    `\nload average (1 min) ${fmt(loadBefore[0] ?? 0, 1)} → ${fmt(loadAfter[0] ?? 0, 1)}; idle ${idleMs / 1000} s before reading memory`,
  );
  console.log(
    "\n| variant | web healthy (ms) | web RSS idle (MB) | web peak RSS (MB) | worker started (ms) | worker RSS idle (MB) | worker peak RSS (MB) |",
  );
  console.log("|---|---|---|---|---|---|---|");
  for (const variant of variants) {
    const rs = results.filter((r) => r.variant === variant.name);
    const list = (pick: (r: Run) => number) => `${rs.map((r) => fmt(pick(r))).join(" / ")} (median ${fmt(median(rs.map(pick)))})`;
    console.log(
      `| ${variant.name} | ${list((r) => r.webMs)} | ${list((r) => r.web.rss)} | ${list((r) => r.web.hwm)} | ${list((r) => r.workerMs)} | ${list((r) => r.worker.rss)} | ${list((r) => r.worker.hwm)} |`,
    );
  }
}

await main();
