import { execFile, execFileSync } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir, userInfo } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import pg from "pg";
import { freePort } from "../reliability/support/processes.js";

/**
 * A PostgreSQL primary and one streaming replica of it, started from the machine's own
 * binaries (`initdb`, `pg_ctl`, `pg_basebackup`) in a temporary directory, on free ports,
 * with trust authentication on 127.0.0.1. The replica is a `pg_basebackup -R` copy of the
 * primary (a standby that streams the primary's WAL). PostgreSQL refuses to run as root, so
 * under root every binary runs as the `postgres` OS user. `stop()` stops both servers
 * (immediate shutdown) and removes the directory.
 */
const run = promisify(execFile);

export interface PgPair {
  /** `postgresql://postgres@127.0.0.1:<port>/<database>` of the primary. */
  primaryUrl: (database?: string) => string;
  replicaUrl: (database?: string) => string;
  /** Resolves once the replica has replayed everything the primary had written when called. */
  waitReplayed: (timeoutMs?: number) => Promise<void>;
  /** Holds (true) or resumes (false) WAL replay on the replica; streaming continues meanwhile. */
  pauseReplay: (paused: boolean) => Promise<void>;
  stop: () => Promise<void>;
}

const BIN_DIRS = ["/usr/lib/postgresql/15/bin", "/usr/local/bin", "/usr/bin"];

function binary(name: string): string {
  for (const dir of BIN_DIRS) {
    const file = path.join(dir, name);
    if (existsSync(file)) return file;
  }
  return name;
}

const asRoot = userInfo().uid === 0;

/** Runs a PostgreSQL binary, as the `postgres` OS user when this process is root. */
async function pgRun(name: string, args: string[]): Promise<string> {
  const [file, argv] = asRoot ? ["runuser", ["-u", "postgres", "--", binary(name), ...args]] : [binary(name), args];
  const { stdout } = await run(file, argv, { timeout: 60_000 });
  return stdout;
}

async function query<T extends pg.QueryResultRow>(url: string, sql: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(sql)).rows;
  } finally {
    await client.end();
  }
}

export async function startPgPair(): Promise<PgPair> {
  const root = mkdtempSync(path.join(tmpdir(), "res-pg-pair-"));
  if (asRoot) {
    const { stdout } = await run("id", ["-u", "postgres"]);
    const { stdout: gid } = await run("id", ["-g", "postgres"]);
    chownSync(root, Number(stdout.trim()), Number(gid.trim()));
  }
  const primaryDir = path.join(root, "primary");
  const replicaDir = path.join(root, "replica");
  const [primaryPort, replicaPort] = [await freePort(), await freePort()];
  const started: string[] = [];

  // Durability is not under test: no fsync, so start-up and writes stay fast.
  const options = (port: number) =>
    `-p ${port} -k ${root} -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off -c wal_level=replica -c max_wal_senders=4`;
  const start = async (dir: string, port: number) => {
    await pgRun("pg_ctl", ["-D", dir, "-l", `${dir}.log`, "-w", "-t", "30", "-o", options(port), "start"]);
    started.push(dir);
  };
  // A process that dies without stop() (a crash, an unhandled error) still stops its servers.
  const stopOnExit = () => {
    for (const dir of [...started].reverse()) {
      const argv = ["-D", dir, "-m", "immediate", "-w", "stop"];
      try {
        if (asRoot) execFileSync("runuser", ["-u", "postgres", "--", binary("pg_ctl"), ...argv], { stdio: "ignore" });
        else execFileSync(binary("pg_ctl"), argv, { stdio: "ignore" });
      } catch {
        // already stopped
      }
    }
    rmSync(root, { recursive: true, force: true });
  };
  process.once("exit", stopOnExit);
  const stop = async () => {
    process.off("exit", stopOnExit);
    for (const dir of started.reverse()) await pgRun("pg_ctl", ["-D", dir, "-m", "immediate", "-w", "stop"]).catch(() => undefined);
    rmSync(root, { recursive: true, force: true });
  };

  const url =
    (port: number) =>
    (database = "postgres") =>
      `postgresql://postgres@127.0.0.1:${port}/${database}`;
  try {
    // initdb's trust setup also admits replication connections from 127.0.0.1.
    await pgRun("initdb", ["-D", primaryDir, "-U", "postgres", "--auth=trust", "--no-sync", "-E", "UTF8", "--locale=C"]);
    await start(primaryDir, primaryPort);
    await pgRun("pg_basebackup", ["-D", replicaDir, "-R", "-X", "stream", "-h", "127.0.0.1", "-p", String(primaryPort), "-U", "postgres"]);
    await start(replicaDir, replicaPort);
  } catch (err) {
    await stop();
    throw err;
  }

  const primaryUrl = url(primaryPort);
  const replicaUrl = url(replicaPort);
  return {
    primaryUrl,
    replicaUrl,
    pauseReplay: async (paused) => {
      if (!paused) {
        await query(replicaUrl(), "SELECT pg_wal_replay_resume()");
        return;
      }
      // A pause is a request: replay stops at its next check, which the state reports.
      await query(replicaUrl(), "SELECT pg_wal_replay_pause()");
      const deadline = Date.now() + 10_000;
      for (;;) {
        const [row] = await query<{ state: string }>(replicaUrl(), "SELECT pg_get_wal_replay_pause_state() AS state");
        if (row?.state === "paused") return;
        if (Date.now() > deadline) throw new Error(`replay did not pause (state ${row?.state})`);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    },
    waitReplayed: async (timeoutMs = 10_000) => {
      const [current] = await query<{ lsn: string }>(primaryUrl(), "SELECT pg_current_wal_lsn()::text AS lsn");
      const lsn = current?.lsn ?? "0/0";
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const [row] = await query<{ caught_up: boolean }>(replicaUrl(), `SELECT pg_last_wal_replay_lsn() >= '${lsn}'::pg_lsn AS caught_up`);
        if (row?.caught_up) return;
        if (Date.now() > deadline) throw new Error(`replica did not replay up to ${lsn} within ${timeoutMs} ms`);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    },
    stop,
  };
}
