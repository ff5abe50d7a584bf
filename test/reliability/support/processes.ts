import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { connect, createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";

/**
 * Real processes and connections the fault tests break on purpose, without touching the
 * machine's shared PostgreSQL or Redis (other test files use them at the same time):
 * a dedicated `redis-server` that can be killed and started again on the same port, and
 * a TCP proxy in front of PostgreSQL whose connections can be cut.
 */
export async function freePort(): Promise<number> {
  const probe: Server = createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const port = (probe.address() as { port: number }).port;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

/** Resolves once something accepts TCP connections on the port (bounded). */
export async function waitForPort(port: number, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const socket = connect({ port, host: "127.0.0.1" });
      socket.once("connect", () => {
        socket.destroy();
        resolve(true);
      });
      socket.once("error", () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`nothing listens on port ${port}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

export interface RedisServer {
  port: number;
  url: string;
  /** Kills the server at once (SIGKILL: no shutdown save), resolving when it has exited. */
  kill: () => Promise<void>;
  /** Starts it again on the same port (with the same data directory). */
  start: () => Promise<void>;
  /** Kills it and removes its data directory. */
  stop: () => Promise<void>;
  readonly running: boolean;
}

/**
 * A dedicated redis-server on a free port. `persistence: "aof"` runs it as production
 * should (append-only file, fsync on every write), so a killed server restarts with its
 * data; `"none"` loses everything on restart, as a flushed or failed-over Redis would.
 */
export async function startRedisServer(options: { persistence: "aof" | "none" }): Promise<RedisServer> {
  const port = await freePort();
  const dir = mkdtempSync(path.join(tmpdir(), "res-redis-"));
  let child: ChildProcess | undefined;
  const args = () => [
    "--port",
    String(port),
    "--bind",
    "127.0.0.1",
    "--save",
    "",
    "--dir",
    dir,
    "--maxmemory-policy",
    "noeviction",
    ...(options.persistence === "aof" ? ["--appendonly", "yes", "--appendfsync", "always"] : ["--appendonly", "no"]),
  ];
  const start = async () => {
    child = spawn("redis-server", args(), { stdio: "ignore" });
    await waitForPort(port);
  };
  const kill = async () => {
    const current = child;
    child = undefined;
    if (!current || current.exitCode !== null) return;
    await new Promise<void>((resolve) => {
      current.once("exit", () => resolve());
      current.kill("SIGKILL");
    });
  };
  await start();
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    kill,
    start,
    stop: async () => {
      await kill();
      rmSync(dir, { recursive: true, force: true });
    },
    get running() {
      return child !== undefined && child.exitCode === null;
    },
  };
}

export interface TcpProxy {
  port: number;
  /** Refuses new connections and destroys every open one (as a network partition would). */
  cut: () => void;
  /** Accepts connections again. */
  restore: () => void;
  /**
   * Cuts everything at a precise moment: once a client has sent bytes matching `client`
   * (e.g. an INSERT) and the server's reply on that same connection matches `server`
   * (its command-complete tag), before that reply reaches the client. The statement has
   * run inside its transaction; the commit never comes. Resolves when the cut happened.
   */
  cutAfter: (client: RegExp, server: RegExp) => Promise<void>;
  /** Connections currently open through the proxy. */
  readonly open: number;
  close: () => Promise<void>;
}

/** A TCP proxy on a free port forwarding to `target`; `cut()` drops every connection. */
export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const pairs = new Set<{ client: Socket; upstream: Socket; armed: boolean }>();
  let isCut = false;
  let trigger: { client: RegExp; server: RegExp; fired: () => void } | undefined;
  const cut = () => {
    isCut = true;
    for (const pair of [...pairs]) {
      pair.client.destroy();
      pair.upstream.destroy();
    }
    pairs.clear();
  };
  const server = createServer((client) => {
    if (isCut) {
      client.destroy();
      return;
    }
    const upstream = connect(target);
    const pair = { client, upstream, armed: false };
    pairs.add(pair);
    const drop = () => {
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on("error", drop).on("close", drop);
    upstream.on("error", drop).on("close", drop);
    client.on("data", (chunk: Buffer) => {
      if (trigger?.client.test(chunk.toString("latin1"))) pair.armed = true;
      upstream.write(chunk);
    });
    upstream.on("data", (chunk: Buffer) => {
      if (trigger && pair.armed && trigger.server.test(chunk.toString("latin1"))) {
        const fired = trigger.fired;
        trigger = undefined;
        cut();
        fired();
        return;
      }
      client.write(chunk);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  return {
    port,
    cut,
    restore: () => {
      isCut = false;
    },
    cutAfter: (client, serverReply) =>
      new Promise<void>((resolve) => {
        trigger = { client, server: serverReply, fired: resolve };
      }),
    get open() {
      return pairs.size;
    },
    close: () =>
      new Promise<void>((resolve) => {
        cut();
        server.close(() => resolve());
      }),
  };
}

/** Polls `probe` until it returns a value other than undefined/false (bounded, no fixed sleeps). */
export async function until<T>(what: string, probe: () => Promise<T | undefined | false>, timeoutMs = 20_000, everyMs = 50): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined && value !== false) return value;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${lastError ? ` (last error: ${String(lastError)})` : ""}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** A worker process (the Procfile's entry) started with a harness's settings, its output kept. */
export interface WorkerProcess {
  child: ChildProcess;
  /** Everything it wrote so far, stdout and stderr. */
  text: () => string;
}

export function startWorkerProcess(config: object, extra: Record<string, string> = {}): WorkerProcess {
  const env: Record<string, string> = { PATH: process.env.PATH ?? "" };
  for (const [name, value] of Object.entries(config)) if (value !== undefined) env[name] = String(value);
  Object.assign(env, { LOG_LEVEL: "info", ...extra });
  const root = path.resolve(import.meta.dirname, "../../..");
  const child = spawn(process.execPath, ["--import", "tsx", path.join(root, "workers/index.ts")], {
    cwd: root,
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  const lines: string[] = [];
  child.stdout?.on("data", (c: Buffer) => lines.push(String(c)));
  child.stderr?.on("data", (c: Buffer) => lines.push(String(c)));
  return { child, text: () => lines.join("") };
}

/** Resolves once the process has exited (at once if it already has). */
export const exited = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once("exit", () => resolve());
  });
