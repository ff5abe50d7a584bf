import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type Supervision, supervise } from "../../scripts/supervise.js";
import { until } from "../reliability/support/processes.js";

/**
 * `npm start`'s supervisor (scripts/supervise.ts) with real child processes: small Node scripts
 * that crash, stay up, or shut down the way web and worker do.
 */
const dir = mkdtempSync(path.join(tmpdir(), "res-supervise-"));
const script = (name: string, body: string) => {
  const file = path.join(dir, name);
  writeFileSync(file, body);
  return file;
};
// Counts its starts in a file; crashes (exit 1) on the first `crashes` starts, then stays up
// until SIGTERM, on which it exits 0 as web and worker do. The handler is in place before the start
// is counted, so a SIGTERM sent as soon as the test sees the count is always answered with 0.
const flaky = script(
  "flaky.mjs",
  `import { existsSync, readFileSync, writeFileSync } from "node:fs";
process.on("SIGTERM", () => process.exit(0));
const [counter, crashes] = [process.argv[2], Number(process.argv[3])];
const starts = (existsSync(counter) ? Number(readFileSync(counter, "utf8")) : 0) + 1;
writeFileSync(counter, String(starts));
if (starts <= crashes) process.exit(1);
setInterval(() => undefined, 1000);
`,
);
const node = process.execPath;
const starts = (counter: string) => (existsSync(counter) ? Number(readFileSync(counter, "utf8")) : 0);

const supervisions: Supervision[] = [];
afterEach(async () => {
  for (const s of supervisions.splice(0)) {
    s.stop("SIGKILL");
    await s.done;
  }
});

describe("npm start's supervisor", () => {
  it("starts a crashed process again after a growing delay, and stops everything on request with 0", async () => {
    const logged: { level: string; fields: Record<string, unknown>; message: string }[] = [];
    const web = path.join(dir, "web-1");
    const worker = path.join(dir, "worker-1");
    const s = supervise(
      new Map<string, [string, ...string[]]>([
        ["web", [node, flaky, web, "2"]],
        ["worker", [node, flaky, worker, "0"]],
      ]),
      {
        restartDelayMs: 100,
        healthyAfterMs: 5000,
        maxQuickExits: 5,
        log: (level, fields, message) => logged.push({ level, fields, message }),
      },
    );
    supervisions.push(s);
    await until("web up after two crashes", async () => starts(web) === 3);
    const restarts = logged.filter((l) => l.message === "the process exited; it starts again");
    expect(restarts.map((l) => [l.level, l.fields.child, l.fields.code, l.fields.restart_in_ms])).toEqual([
      ["warn", "web", 1, 100],
      ["warn", "web", 1, 200],
    ]);
    // The worker never crashed and was never started again.
    expect(starts(worker)).toBe(1);
    const webProcess = s.current("web");
    expect(webProcess?.exitCode).toBeNull();
    s.stop("SIGTERM");
    expect(await s.done).toBe(0);
    expect(webProcess?.exitCode).toBe(0);
    expect(starts(web)).toBe(3);
  });

  it("gives up on a process that keeps exiting right after it starts: everything stops with its code", async () => {
    const logged: string[] = [];
    const web = path.join(dir, "web-2");
    const worker = path.join(dir, "worker-2");
    const s = supervise(
      new Map<string, [string, ...string[]]>([
        ["web", [node, flaky, web, "100"]],
        ["worker", [node, flaky, worker, "0"]],
      ]),
      { restartDelayMs: 20, healthyAfterMs: 5000, maxQuickExits: 3, log: (level, _fields, message) => logged.push(`${level}: ${message}`) },
    );
    supervisions.push(s);
    const worker0 = await until("the worker started", async () => s.current("worker"));
    expect(await s.done).toBe(1);
    expect(starts(web)).toBe(3);
    expect(worker0.exitCode).toBe(0);
    // Given up, then the worker's stop (every exit during a stop is logged with its code).
    expect(logged.slice(-2)).toEqual([
      "error: the process keeps exiting soon after it starts; everything stops",
      "info: the process stopped",
    ]);
  });

  it("stops the others when one process is shut down on its own (exit 0)", async () => {
    const web = path.join(dir, "web-3");
    const worker = path.join(dir, "worker-3");
    const s = supervise(
      new Map<string, [string, ...string[]]>([
        ["web", [node, flaky, web, "0"]],
        ["worker", [node, flaky, worker, "0"]],
      ]),
      { restartDelayMs: 20 },
    );
    supervisions.push(s);
    const [webProcess, workerProcess] = await until("both started", async () => {
      const pair = [s.current("web"), s.current("worker")];
      return pair.every((p) => p?.pid !== undefined && starts(web) === 1 && starts(worker) === 1) ? pair : undefined;
    });
    webProcess?.kill("SIGTERM");
    expect(await s.done).toBe(0);
    expect(workerProcess?.exitCode).toBe(0);
    expect(starts(web)).toBe(1);
  });
});

process.on("exit", () => rmSync(dir, { recursive: true, force: true }));
