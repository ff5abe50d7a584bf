import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { connect, createServer as createTcpServer } from "node:net";
import path from "node:path";
import { commandArgv, readProcfile } from "../../scripts/procfile.js";

/**
 * The service under load, started as `npm start` starts it: the release step (migrations),
 * then one web and one worker process, each with the service's environment and the Procfile's
 * command, which runs the compiled build (`node … dist/…`, built first when it is missing or
 * stale), so each is one process whose memory can be read from /proc. Beside them: a redis-server of the bench's own (Redis as
 * production runs it: noeviction) and a local Hacker News search API for collection jobs.
 */
export const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), "../..");

let built = false;

/** A Procfile entry's command as argv (`node` is this Node binary); builds dist/ first when it is stale. */
export function procfileCommand(entry: string): string[] {
  if (!built) {
    execFileSync(process.execPath, [path.join(root, "scripts", "build.ts"), "--if-stale"], { cwd: root, stdio: "inherit" });
    built = true;
  }
  const command = readProcfile().get(entry);
  if (!command) throw new Error(`the Procfile has no ${entry} entry`);
  return commandArgv(command);
}

export async function freePort(): Promise<number> {
  const probe = createTcpServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const port = (probe.address() as { port: number }).port;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

export async function waitFor(what: string, probe: () => Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const portOpen = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect({ port, host: "127.0.0.1" });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });

export async function startRedis(): Promise<{ url: string; stop: () => Promise<void> }> {
  const port = await freePort();
  const child = spawn(
    "redis-server",
    ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--maxmemory-policy", "noeviction"],
    {
      stdio: "ignore",
    },
  );
  await waitFor("redis-server", () => portOpen(port), 10_000);
  return { url: `redis://127.0.0.1:${port}`, stop: () => stop(child) };
}

function stop(child: ChildProcess, signal: NodeJS.Signals = "SIGTERM"): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
    child.once("exit", () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill(signal);
  });
}

export interface ServiceProcess {
  name: string;
  child: ChildProcess;
  output: string[];
  stop: () => Promise<void>;
}

/** Runs a command (a Procfile entry's argv) as a process of its own, keeping its last output. */
export function runProcess(name: string, argv: string[], env: Record<string, string>): ServiceProcess {
  const output: string[] = [];
  const [command, ...rest] = argv as [string, ...string[]];
  const child = spawn(command, rest, { cwd: root, env: { PATH: process.env.PATH ?? "", ...env }, stdio: ["ignore", "pipe", "pipe"] });
  const keep = (chunk: Buffer) => {
    output.push(String(chunk));
    if (output.length > 200) output.shift();
  };
  child.stdout?.on("data", keep);
  child.stderr?.on("data", keep);
  return { name, child, output, stop: () => stop(child) };
}

/** Runs a TypeScript entry as one Node process (tsx's loader, no wrapper process). */
export const runEntry = (name: string, script: string, env: Record<string, string>) =>
  runProcess(name, [process.execPath, "--import", "tsx", path.join(root, script)], env);

export async function exitCode(proc: ServiceProcess): Promise<number> {
  if (proc.child.exitCode !== null) return proc.child.exitCode;
  return new Promise((resolve) => proc.child.once("exit", (code) => resolve(code ?? 1)));
}

/** Resident memory of a process in MB (VmRSS from /proc), or 0 once it has exited. */
export function rssMb(pid: number | undefined): number {
  if (!pid) return 0;
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const kb = Number(/^VmRSS:\s+(\d+)\s+kB/m.exec(status)?.[1] ?? 0);
    return kb / 1024;
  } catch {
    return 0;
  }
}

/** Samples each process's RSS every `everyMs`, keeping the peak and the last value. */
export function sampleRss(procs: ServiceProcess[], everyMs = 250) {
  const peak: Record<string, number> = {};
  const last: Record<string, number> = {};
  const timer = setInterval(() => {
    for (const p of procs) {
      const mb = rssMb(p.child.pid);
      last[p.name] = mb;
      peak[p.name] = Math.max(peak[p.name] ?? 0, mb);
    }
  }, everyMs);
  return {
    peak,
    last,
    stop: () => clearInterval(timer),
  };
}

/** Algolia-format Hacker News search answering at once: `stories` stories for any query. */
export async function startHackerNews(stories: number): Promise<{ url: string; searches: () => number; close: () => Promise<void> }> {
  let searches = 0;
  const server: Server = createServer((req, res) => {
    req.resume();
    const url = new URL(req.url ?? "/", "http://x");
    if (url.pathname !== "/api/v1/search") {
      res.writeHead(404, { "content-type": "application/json" });
      res.end('{"message":"Not Found"}');
      return;
    }
    searches++;
    const query = url.searchParams.get("query") ?? "";
    const slug = `${query.replace(/[^A-Za-z0-9]+/g, "-").slice(0, 30)}-${searches}`;
    const hits = Array.from({ length: stories }, (_, i) => {
      const at = new Date(Date.now() - (i + 1) * 3_600_000);
      return {
        objectID: `${slug}-${i}`,
        title: `Story ${i} about ${query}`,
        url: `https://news.example.com/${slug}/${i}`,
        author: `hn-${i}`,
        created_at: at.toISOString(),
        created_at_i: Math.floor(at.getTime() / 1000),
        points: 10 + i,
        num_comments: 0,
        story_text: `Story ${i}: people say the pricing of ${query} is confusing, onboarding is slow, but support answers quickly.`,
      };
    });
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ hits, nbHits: stories, page: 0, nbPages: 1, hitsPerPage: stories, query }));
  });
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}/api/v1`,
    searches: () => searches,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
