import { type ChildProcess, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import path from "node:path";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../../src/platform/logger.js";
import { logRedisErrors, redactUrls } from "../../src/platform/redis-errors.js";
import { ensureBuilt, procfileArgv } from "../helpers/compiled.js";
import { createHarness, type Harness } from "../helpers/harness.js";
import { freePort, until } from "../reliability/support/processes.js";
import { type HackerNewsFake, hackerNewsCollector, startHackerNews } from "../reliability/support/upstream.js";

/**
 * Process hygiene with real child processes: a crash (uncaught exception, unhandled
 * rejection) is logged and ends the process with a non-zero code; a bad setting stops the
 * worker before it starts; Redis errors are logged rate-limited and without passwords; and a
 * worker receiving SIGTERM finishes its running job, or leaves it to the stalled-job check
 * once the drain bound (WORKER_LOCK_DURATION_MS) has passed.
 */
const root = path.resolve(import.meta.dirname, "../..");
const PER_PAGE = 3;
const PAGES = 2;

let h: Harness;
let hn: HackerNewsFake;
const children: ChildProcess[] = [];

beforeAll(async () => {
  await ensureBuilt();
  hn = await startHackerNews(PER_PAGE, PAGES);
  h = await createHarness({
    ...hackerNewsCollector(hn, PER_PAGE, PAGES),
    WORKER_CONCURRENCY: "2",
    WORKER_STALLED_INTERVAL_MS: "1000",
  });
});
afterAll(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  await h?.close();
  await hn?.close();
});

interface Started {
  child: ChildProcess;
  /** Every JSON line logged so far (non-JSON output is kept as `{ text }`). */
  lines: () => Record<string, unknown>[];
  output: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * Starts the Procfile's worker (its compiled entry, as production runs it), or a test-only entry
 * (TypeScript, through tsx), with the harness's settings and `overrides`.
 */
function start(entry: "worker" | `test/${string}.ts`, overrides: Record<string, string> = {}, args: string[] = []): Started {
  const env: Record<string, string> = { PATH: process.env.PATH ?? "" };
  for (const [name, value] of Object.entries(h.config)) if (value !== undefined) env[name] = String(value);
  Object.assign(env, { LOG_LEVEL: "info" }, overrides);
  const [node, ...command] = entry === "worker" ? procfileArgv("worker") : [process.execPath, "--import", "tsx", path.join(root, entry)];
  const child = spawn(node, [...command, ...args], {
    cwd: root,
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.push(child);
  let output = "";
  child.stdout?.on("data", (c: Buffer) => (output += String(c)));
  child.stderr?.on("data", (c: Buffer) => (output += String(c)));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, signal) => resolve({ code, signal })),
  );
  return {
    child,
    exited,
    output: () => output,
    lines: () =>
      output
        .split("\n")
        .filter(Boolean)
        .map((line) => {
          try {
            return JSON.parse(line) as Record<string, unknown>;
          } catch {
            return { text: line };
          }
        }),
  };
}

const logged = (p: Started, msg: string | RegExp) =>
  until(`"${msg}" logged`, async () => p.lines().find((l) => (typeof msg === "string" ? l.msg === msg : msg.test(String(l.msg)))), 30_000);

describe("a crash", () => {
  it.each([
    ["exception", "uncaught exception; the process exits"],
    ["rejection", "unhandled rejection; the process exits"],
  ])("(%s after start-up) is logged at fatal and ends the process with code 1", async (kind, message) => {
    const p = start("test/platform/support/crash-entry.ts", {}, [kind]);
    const { code } = await p.exited;
    expect(code, p.output()).toBe(1);
    const lines = p.lines();
    expect(lines.some((l) => l.msg === "started")).toBe(true);
    const fatal = lines.find((l) => l.level === 60);
    expect(fatal, p.output()).toMatchObject({
      msg: message,
      error: { type: "Error", message: "lost redis://svc:[redacted]@cache.internal:6379 mid-request" },
    });
    expect(p.output()).not.toContain("hunter2-secret");
  });
});

describe("a bad setting", () => {
  it("stops the worker before it starts, naming the variable, with code 1", async () => {
    const p = start("worker", { WORKER_CONCURRENCY: "lots" });
    const { code } = await p.exited;
    expect(code).toBe(1);
    expect(p.output()).toMatch(/WORKER_CONCURRENCY/);
    expect(p.output()).not.toContain('"msg":"worker started"');
  });
});

describe("Redis errors", () => {
  it("of a worker whose Redis is down are logged once per connection and code, after a quiet start, without the password", async () => {
    const port = await freePort(); // nothing listens there
    const p = start("worker", { REDIS_URL: `redis://svc:hunter2-secret@127.0.0.1:${port}` });
    await logged(p, "worker started");
    const startedAt = Date.now();
    // Both connections (the producer and the workers') fail every 0.2–5 s; the grace is 5 s.
    await until("both connections' errors logged", async () => {
      const errors = p.lines().filter((l) => l.msg === "redis error");
      return new Set(errors.map((l) => l.connection)).size === 2 || undefined;
    });
    const firstAfterMs = Date.now() - startedAt;
    // Watch a few more seconds: no second line within the 30 s window.
    await until("3 s more", async () => Date.now() - startedAt > firstAfterMs + 3000 || undefined, 10_000, 200);
    const errors = p.lines().filter((l) => l.msg === "redis error");
    expect(errors.map((l) => l.connection).sort()).toEqual(["worker:producer", "worker:worker"]);
    for (const line of errors) {
      expect(line).toMatchObject({ level: 50, code: "ECONNREFUSED", never_ready: true, error: { code: "ECONNREFUSED" } });
      // The failures before the line are counted, not printed.
      expect(line.suppressed).toBeGreaterThan(0);
    }
    expect(p.output()).not.toContain("hunter2-secret");

    // SIGTERM with Redis still down: no job runs, so the process ends without waiting out the bound.
    p.child.kill("SIGTERM");
    const { code } = await p.exited;
    expect(code).toBe(0);
  });

  it("of one connection failing again and again come as one line per window with the count suppressed", async () => {
    const lines: Record<string, unknown>[] = [];
    const logger = createLogger("info", "probe", { write: (line: string) => void lines.push(JSON.parse(line)) });
    const port = await freePort();
    const redis = new Redis(`redis://user:pw-secret@127.0.0.1:${port}`, { retryStrategy: () => 50, maxRetriesPerRequest: null });
    logRedisErrors(redis, logger, "probe", { windowMs: 1000, graceMs: 0 });
    try {
      const startedAt = Date.now();
      await until("3.5 s of failures", async () => Date.now() - startedAt > 3500 || undefined, 10_000, 100);
    } finally {
      redis.disconnect();
    }
    const errors = lines.filter((l) => l.msg === "redis error");
    // About 3.5 s / 50 ms = 70 failures, printed at most once per second.
    expect(errors.length).toBeGreaterThanOrEqual(3);
    expect(errors.length).toBeLessThanOrEqual(5);
    const suppressed = errors.reduce((n, l) => n + Number(l.suppressed ?? 0), 0);
    expect(suppressed).toBeGreaterThan(20);
    expect(JSON.stringify(lines)).not.toContain("pw-secret");
  });

  it("never carry a URL's password", () => {
    expect(redactUrls("redis://user:pass@h:6379/0 and rediss+cluster://:p%40ss@a:1,b:2")).toBe(
      "redis://user:[redacted]@h:6379/0 and rediss+cluster://:[redacted]@a:1,b:2",
    );
    expect(redactUrls("redis://tokenonly@h")).toBe("redis://[redacted]@h");
    expect(redactUrls("connect ECONNREFUSED 127.0.0.1:6379")).toBe("connect ECONNREFUSED 127.0.0.1:6379");
  });
});

describe("a worker receiving SIGTERM", () => {
  /** Creates a collection job on a Hacker News entity; its second page is held by the upstream. */
  async function heldJob(): Promise<{ jobId: string; entityId: string }> {
    const auth = { Authorization: `Bearer ${await h.token()}` };
    const entity = await h.http
      .post("/api/entities")
      .set(auth)
      .send({ name: "Drainco", keywords: ["drainco"], platforms: ["hackernews"] });
    expect(entity.status).toBe(201);
    const created = await h.http
      .post("/agent/v1/ingest/collection/jobs")
      .set(auth)
      .send({
        entity_id: entity.body.id,
        objective: "What about Drainco?",
        collection_only: true,
        idempotency_key: `drain-${randomUUID()}`,
      });
    expect(created.status).toBe(200);
    return { jobId: created.body.job_id as string, entityId: entity.body.id as string };
  }
  const row = (id: string) => h.deps.db.collectionJob.findUniqueOrThrow({ where: { id } });

  it("finishes its running job before it exits", async () => {
    hn.hold(1);
    const { jobId } = await heldJob();
    const worker = start("worker", { WORKER_LOCK_DURATION_MS: "20000" });
    await until("page 1 requested", async () => hn.held >= 1 || undefined, 30_000);

    worker.child.kill("SIGTERM");
    await logged(worker, "shutting down");
    // The process is draining; the upstream now answers, and the job ends.
    hn.release();
    const { code } = await worker.exited;
    expect(code, worker.output()).toBe(0);
    expect(await row(jobId)).toMatchObject({ status: "completed", attempts: 1 });
    expect(worker.lines().some((l) => String(l.msg).includes("stalled-job check"))).toBe(false);
    expect(worker.lines().filter((l) => Number(l.level) >= 50)).toEqual([]);
  }, 60_000);

  it("exits at the drain bound when its job outlasts it, leaving the job to the stalled-job check", async () => {
    hn.hold(1);
    const { jobId } = await heldJob();
    const worker = start("worker", { WORKER_LOCK_DURATION_MS: "2000" });
    await until("page 1 requested", async () => hn.held >= 1 || undefined, 30_000);

    const signalledAt = Date.now();
    worker.child.kill("SIGTERM");
    const { code } = await worker.exited;
    const tookMs = Date.now() - signalledAt;
    expect(code, worker.output()).toBe(0);
    expect(tookMs).toBeGreaterThanOrEqual(2000);
    expect(tookMs).toBeLessThan(10_000);
    const left = worker.lines().find((l) => String(l.msg).includes("left to the stalled-job check"));
    expect(left, worker.output()).toMatchObject({ level: 40, drain_ms: 2000, jobs: [{ queue: "collection", name: "collection.run.v1" }] });
    expect((await row(jobId)).status).toBe("running");

    // Another worker takes the job over once its lock has lapsed and completes it.
    hn.release();
    const next = start("worker", { WORKER_LOCK_DURATION_MS: "2000" });
    const done = await until(
      "the job completed by the next worker",
      async () => {
        const r = await row(jobId);
        return r.status === "completed" ? r : undefined;
      },
      45_000,
    );
    expect(done.attempts).toBe(2);
    next.child.kill("SIGTERM");
    expect((await next.exited).code).toBe(0);
  }, 90_000);
});
