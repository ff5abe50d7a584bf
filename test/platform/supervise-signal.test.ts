import { type ChildProcess, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureBuilt, procfileArgv } from "../helpers/compiled.js";
import { createHarness, type Harness } from "../helpers/harness.js";
import { exited, freePort, until, waitForPort } from "../reliability/support/processes.js";
import { type HackerNewsFake, hackerNewsCollector, startHackerNews } from "../reliability/support/upstream.js";

/**
 * Ctrl-C on `npm start`: the terminal sends SIGINT to every process of the foreground group
 * (the supervisor, web and worker), and the supervisor sends it on to web and worker once
 * more. Here the supervisor (`supervise` + `stopOnSignals`, as scripts/start-all.ts wires them,
 * compiled) leads its own process group with the Procfile's web and worker (their compiled entries,
 * as `npm start` runs them) as its children; the worker
 * holds a collection job whose upstream holds its answer. SIGINT goes to the whole group. The
 * worker must drain, not exit at once on the forwarded repeat: still running more than a second
 * later, it finishes the job once the upstream answers, and every process exits 0.
 */
const PER_PAGE = 3;
const PAGES = 2;
const root = path.resolve(import.meta.dirname, "../..");
const dir = mkdtempSync(path.join(tmpdir(), "res-supervise-signal-"));
const launcher = path.join(dir, "start.mjs");
writeFileSync(
  launcher,
  `import { stopOnSignals, supervise } from ${JSON.stringify(path.join(root, "dist/scripts/supervise.js"))};
const commands = new Map(JSON.parse(process.argv[2]));
const supervision = supervise(commands, {
  cwd: ${JSON.stringify(root)},
  log: (level, fields, message) => console.log(JSON.stringify({ supervisor: true, level, ...fields, msg: message })),
});
stopOnSignals(supervision);
process.exit(await supervision.done);
`,
);

let h: Harness;
let hn: HackerNewsFake;
let group: ChildProcess | undefined;

beforeAll(async () => {
  await ensureBuilt();
  hn = await startHackerNews(PER_PAGE, PAGES);
  h = await createHarness({
    ...hackerNewsCollector(hn, PER_PAGE, PAGES),
    COLLECTOR_TIMEOUT_MS: "30000",
    // The drain's bound: far longer than the test holds the job.
    WORKER_LOCK_DURATION_MS: "20000",
    WORKER_CONCURRENCY: "2",
    LOG_LEVEL: "info",
  });
});
afterAll(async () => {
  if (group?.pid && group.exitCode === null && group.signalCode === null) process.kill(-group.pid, "SIGKILL");
  hn?.release();
  await h?.close();
  await hn?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("Ctrl-C on npm start (SIGINT to the whole process group)", { timeout: 90_000 }, () => {
  it("drains the worker once: its running job finishes and every process exits 0", async () => {
    const port = await freePort();
    const env: Record<string, string> = { PATH: process.env.PATH ?? "" };
    for (const [name, value] of Object.entries(h.config)) if (value !== undefined) env[name] = String(value);
    Object.assign(env, { PORT: String(port), HOST: "127.0.0.1", LOG_LEVEL: "info" });
    const node = process.execPath;
    const commands = [
      ["web", procfileArgv("web")],
      ["worker", procfileArgv("worker")],
    ];
    // Its own process group, as a terminal's foreground job is: SIGINT to -pid reaches all three.
    const child = spawn(node, ["--enable-source-maps", launcher, JSON.stringify(commands)], {
      cwd: root,
      env,
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
    });
    group = child;
    const output: string[] = [];
    child.stdout?.on("data", (c: Buffer) => output.push(String(c)));
    child.stderr?.on("data", (c: Buffer) => output.push(String(c)));
    const lines = () =>
      output
        .join("")
        .split("\n")
        .flatMap((line) => {
          try {
            return [JSON.parse(line) as Record<string, unknown>];
          } catch {
            return [];
          }
        });
    const supervisorSaid = (msg: string, name: string) => lines().find((l) => l.supervisor && l.msg === msg && l.child === name);
    const text = () => output.join("").slice(-4000);

    await waitForPort(port, 30_000).catch((err: Error) => {
      throw new Error(`${err.message}\n${text()}`);
    });
    await until("the worker started", async () => lines().some((l) => l.msg === "worker started"), 30_000);

    const token = await h.token();
    const auth = { Authorization: `Bearer ${token}` };
    const entity = await h.http
      .post("/api/entities")
      .set(auth)
      .send({ name: "Ctrlco", keywords: ["ctrlco"], platforms: ["hackernews"] });
    expect(entity.status).toBe(201);
    hn.hold(1);
    const created = await h.http
      .post("/agent/v1/ingest/collection/jobs")
      .set(auth)
      .send({
        entity_id: entity.body.id,
        objective: "What do people say about Ctrlco?",
        collection_only: true,
        idempotency_key: `ctrl-c-${randomUUID()}`,
      });
    expect(created.status).toBe(200);
    const jobId = created.body.job_id as string;
    const row = () => h.deps.db.collectionJob.findUniqueOrThrow({ where: { id: jobId } });
    // The worker stored page 0 and waits on page 1.
    await until("the job mid-run in the worker", async () => hn.held >= 1 && (await row()).status === "running", 30_000);

    const signalledAt = Date.now();
    process.kill(-(child.pid as number), "SIGINT");
    await until("the supervisor sent the signal on", async () => lines().filter((l) => l.msg === "shutting down").length >= 2, 10_000);
    // Longer than a repeat is taken for the same stop: the worker is still draining its job.
    await new Promise((r) => setTimeout(r, Math.max(0, signalledAt + 1500 - Date.now())));
    expect(supervisorSaid("the process stopped", "worker"), text()).toBeUndefined();
    expect((await row()).status).toBe("running");

    hn.release();
    const finished = await until("the job finished", async () => {
      const r = await row();
      return r.status === "running" ? undefined : r;
    });
    expect(finished.status, text()).toBe("completed");
    expect(await h.deps.db.content.count({ where: { entityId: entity.body.id } })).toBe(PER_PAGE * PAGES);

    await exited(child);
    expect(child.exitCode, text()).toBe(0);
    expect(supervisorSaid("the process stopped", "worker"), text()).toMatchObject({ code: 0, signal: null });
    expect(supervisorSaid("the process stopped", "web"), text()).toMatchObject({ code: 0, signal: null });
    // The worker got the terminal's SIGINT and the supervisor's (unless the kernel merged the two) and took them as one stop.
    expect(
      lines().filter((l) => l.msg === "second signal while shutting down; exiting now"),
      text(),
    ).toEqual([]);
  });
});
