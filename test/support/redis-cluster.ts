import { type ChildProcess, execFile, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { isCluster, type Redis } from "../../src/platform/redis.js";
import { freePort, waitForPort } from "../reliability/support/processes.js";

/**
 * A local Redis Cluster built from the machine's `redis-server` and `redis-cli`: cluster-enabled
 * nodes on free ports (three masters, and one replica each when asked), joined with
 * `redis-cli --cluster create`, ready once every node reports `cluster_state:ok`. Nodes run
 * as child processes without persistence; `stop()` kills them and removes their directory.
 */
const run = promisify(execFile);

export interface ClusterNode {
  port: number;
  readonly running: boolean;
  /** SIGKILL, resolving once the process has exited. */
  kill: () => Promise<void>;
  /** Starts the node again on its port with its cluster config (it rejoins the cluster). */
  start: () => Promise<void>;
}

export interface RedisClusterHandle {
  nodes: ClusterNode[];
  /** `redis+cluster://127.0.0.1:p1,127.0.0.1:p2,...` (every node as a seed). */
  url: string;
  /** The node serving `key`'s slot as master right now. */
  masterFor: (key: string) => Promise<ClusterNode>;
  /** Resolves once every running node reports `cluster_state:ok` and agrees on the masters. */
  waitHealthy: (timeoutMs?: number) => Promise<void>;
  stop: () => Promise<void>;
}

export interface ClusterOptions {
  masters?: number;
  replicasPerMaster?: 0 | 1;
  /** cluster-node-timeout: how long a master may be unreachable before its replica takes over. */
  nodeTimeoutMs?: number;
}

/** Ports p and p+10000 (the cluster bus) both free. */
async function freeClusterPort(taken: Set<number>): Promise<number> {
  for (;;) {
    const port = await freePort();
    if (port > 55_000 || taken.has(port)) continue;
    const bus = await new Promise<boolean>((resolve) => {
      const server = createServer();
      server.once("error", () => resolve(false));
      server.listen(port + 10_000, "127.0.0.1", () => server.close(() => resolve(true)));
    });
    if (bus) {
      taken.add(port);
      return port;
    }
  }
}

/** A `CLUSTER NODES` line (split on blanks) of a master not flagged as failing. */
const isServingMaster = (fields: string[]) => {
  const flags = (fields[2] ?? "").split(",");
  return flags.includes("master") && !flags.some((f) => f.startsWith("fail"));
};

const portOf = (fields: string[]) => Number(fields[1]?.split("@")[0]?.split(":").at(-1));

export async function cli(port: number, ...args: string[]): Promise<string> {
  const { stdout } = await run("redis-cli", ["-h", "127.0.0.1", "-p", String(port), ...args], { timeout: 30_000 });
  return stdout;
}

export async function startRedisCluster(options: ClusterOptions = {}): Promise<RedisClusterHandle> {
  const masters = options.masters ?? 3;
  const replicas = options.replicasPerMaster ?? 0;
  const nodeTimeout = options.nodeTimeoutMs ?? 2000;
  const dir = mkdtempSync(path.join(tmpdir(), "res-redis-cluster-"));
  const taken = new Set<number>();
  const ports: number[] = [];
  for (let i = 0; i < masters * (1 + replicas); i++) ports.push(await freeClusterPort(taken));

  const nodes: ClusterNode[] = ports.map((port) => {
    let child: ChildProcess | undefined;
    const node: ClusterNode = {
      port,
      get running() {
        return child !== undefined && child.exitCode === null && child.signalCode === null;
      },
      start: async () => {
        child = spawn(
          "redis-server",
          [
            "--port",
            String(port),
            "--bind",
            "127.0.0.1",
            "--dir",
            dir,
            "--cluster-enabled",
            "yes",
            "--cluster-config-file",
            path.join(dir, `nodes-${port}.conf`),
            "--cluster-node-timeout",
            String(nodeTimeout),
            // A replica takes over however long it was cut off from its master.
            "--cluster-replica-validity-factor",
            "0",
            "--save",
            "",
            "--appendonly",
            "no",
            "--daemonize",
            "no",
            "--maxmemory-policy",
            "noeviction",
          ],
          { stdio: "ignore" },
        );
        await waitForPort(port);
      },
      kill: async () => {
        const current = child;
        child = undefined;
        if (!current || current.exitCode !== null || current.signalCode !== null) return;
        await new Promise<void>((resolve) => {
          current.once("exit", () => resolve());
          current.kill("SIGKILL");
        });
      },
    };
    return node;
  });

  const stop = async () => {
    await Promise.allSettled(nodes.map((n) => n.kill()));
    rmSync(dir, { recursive: true, force: true });
  };

  const waitHealthy = async (timeoutMs = 30_000) => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const live = nodes.filter((n) => n.running);
      const livePorts = new Set(live.map((n) => n.port));
      const [states, views] = await Promise.all([
        Promise.all(live.map((n) => cli(n.port, "cluster", "info").catch(() => ""))),
        Promise.all(live.map((n) => cli(n.port, "cluster", "nodes").catch(() => ""))),
      ]);
      const replicationLinks = await Promise.all(live.map((n) => cli(n.port, "info", "replication").catch(() => "")));
      // Healthy: every live node says ok and sees `masters` masters serving slots, all of them
      // live, and every live replica is in sync with its master (so it can take over).
      const healthy =
        live.length > 0 &&
        replicationLinks.every((info) => !info.includes("role:slave") || info.includes("master_link_status:up")) &&
        states.every((s) => s.includes("cluster_state:ok")) &&
        views.every((view) => {
          const serving = view
            .split("\n")
            .map((line) => line.trim().split(/\s+/))
            .filter((fields) => isServingMaster(fields) && fields.length > 8);
          return serving.length === masters && serving.every((fields) => livePorts.has(portOf(fields)));
        });
      if (healthy) return;
      if (Date.now() > deadline) throw new Error(`redis cluster not healthy after ${timeoutMs} ms:\n${views.join("\n")}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };

  try {
    await Promise.all(nodes.map((n) => n.start()));
    await run(
      "redis-cli",
      ["--cluster", "create", ...ports.map((p) => `127.0.0.1:${p}`), "--cluster-replicas", String(replicas), "--cluster-yes"],
      { timeout: 60_000 },
    );
    await waitHealthy();
  } catch (err) {
    await stop();
    throw err;
  }

  return {
    nodes,
    url: `redis+cluster://${ports.map((p) => `127.0.0.1:${p}`).join(",")}`,
    masterFor: async (key) => {
      for (const node of nodes.filter((n) => n.running)) {
        const slot = Number((await cli(node.port, "cluster", "keyslot", key)).trim());
        const shards = await cli(node.port, "cluster", "nodes");
        for (const line of shards.split("\n")) {
          const fields = line.trim().split(/\s+/);
          if (!isServingMaster(fields)) continue;
          const port = portOf(fields);
          for (const range of fields.slice(8)) {
            const [from, to = from] = range.split("-").map(Number) as [number, number?];
            if (slot >= from && slot <= (to ?? from)) {
              const owner = nodes.find((n) => n.port === port);
              if (owner) return owner;
            }
          }
        }
      }
      throw new Error(`no master serves ${key}`);
    },
    waitHealthy,
    stop,
  };
}

/**
 * How many subscribers Redis counts on each channel: PUBSUB NUMSUB on one node; on a
 * cluster (sharded pub/sub) PUBSUB SHARDNUMSUB summed over the masters.
 */
export async function subscriberCounts(redis: Redis, channels: string[]): Promise<number[]> {
  const nodes = isCluster(redis) ? redis.nodes("master") : [redis];
  const command = isCluster(redis) ? "SHARDNUMSUB" : "NUMSUB";
  const totals = channels.map(() => 0);
  for (const node of nodes) {
    const reply = (await node.call("PUBSUB", command, ...channels)) as (string | number)[];
    channels.forEach((_, i) => {
      totals[i] = (totals[i] ?? 0) + Number(reply[2 * i + 1] ?? 0);
    });
  }
  return totals;
}
