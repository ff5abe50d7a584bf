/**
 * Publish-to-client latency of the analysis event relay with 200 concurrent SSE streams.
 *
 *   npx tsx bench/sse/index.ts [--streams 200] [--events 10000] [--rate 1000]
 *
 * Uses a database of its own (`res_bench_sse` on DATABASE_URL's server), starts the real
 * web application on a local port, and a client process (clients.ts) opens one
 * `GET /agent/v1/analysis/{id}/events` stream per analysis, parsing each with
 * eventsource-parser as an agent would. Latency is from just before the event is sent to
 * the client parsing it; every event carries its send time `t`.
 *
 * - paced: events go to the streams in turn at `--rate` events per second in total
 *   (the steady state of many analyses running at once);
 * - burst: one event to every stream at the same instant, the next burst when all have
 *   arrived (the worst case: the last of 200 waits for the 199 before it);
 * each measured for a bare Redis PUBLISH (what the relay adds) and for the worker's full
 * path, `appendEvent` (store in PostgreSQL, then publish).
 */
import { type ChildProcess, fork } from "node:child_process";
import { performance } from "node:perf_hooks";
import { analysisChannel, appendEvent } from "../../src/insights/analysis/events.js";
import { ensureDatabase, withDatabase } from "../../src/platform/database-admin.js";
import { closeDeps } from "../../src/platform/deps.js";
import { MIGRATIONS_DIR, migrate } from "../../src/platform/migrate.js";
import { startBenchApp } from "../lib/app.js";

const args = process.argv.slice(2);
const arg = (name: string, fallback: number) => (args.includes(name) ? Number(args[args.indexOf(name) + 1]) || fallback : fallback);
const STREAMS = arg("--streams", 200);
const EVENTS = arg("--events", 10_000);
const RATE = arg("--rate", 1000);
const SECRET = "bench-sse-secret-0123456789abcdef";

const serverUrl = process.env.DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";
const DB_URL = withDatabase(serverUrl, "res_bench_sse");
const log = (line: string) => process.stdout.write(`${line}\n`);
const now = () => performance.timeOrigin + performance.now();

function summary(samples: number[]) {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
  return `n=${sorted.length}  p50 ${at(50).toFixed(2)} ms  p90 ${at(90).toFixed(2)} ms  p99 ${at(99).toFixed(2)} ms  max ${sorted.at(-1)!.toFixed(2)} ms`;
}

function request<T>(child: ChildProcess, command: object, reply: string): Promise<T> {
  return new Promise((resolve) => {
    const onMessage = (message: { type: string }) => {
      if (message.type !== reply) return;
      child.off("message", onMessage);
      resolve(message as T);
    };
    child.on("message", onMessage);
    child.send(command);
  });
}

async function main() {
  await ensureDatabase(DB_URL);
  await migrate(DB_URL, MIGRATIONS_DIR);
  const {
    config,
    deps,
    server,
    base,
    token: mint,
  } = await startBenchApp({
    databaseUrl: DB_URL,
    secret: SECRET,
    redisPrefix: "bench-sse",
    poolSize: 20,
  });

  const sub = "bench-sse-user";
  const token = await mint(sub);
  const user = await deps.db.user.upsert({ where: { sub }, create: { sub }, update: {} });
  await deps.db.analysis.deleteMany({ where: { userId: user.id } });
  const analyses = await deps.db.analysis.createManyAndReturn({
    data: Array.from({ length: STREAMS }, (_, i) => ({ userId: user.id, question: `bench ${i}`, status: "running" })),
    select: { id: true },
  });
  const ids = analyses.map((a) => a.id);

  const child = fork(new URL("./clients.ts", import.meta.url), [], { execArgv: ["--import", "tsx"] });
  await request(child, { type: "open", base, token, ids }, "opened");
  log(`${STREAMS} streams open; the web process holds ${deps.pubsub.channelCount} channel subscriptions on one Redis connection`);

  // Every stream's next sequence number. Bare publishes are contiguous, so the relay never
  // has a gap to fill from the store; before the append runs, each analysis's event
  // counter is brought up to the published sequence.
  const nextSeq = new Map(ids.map((id) => [id, 1]));
  const alignStore = async () => {
    const seqs = ids.map((id) => nextSeq.get(id)! - 1);
    await deps.db.$executeRaw`
      UPDATE analyses a SET event_seq = v.seq FROM unnest(${ids}::uuid[], ${seqs}::int[]) AS v(id, seq) WHERE a.id = v.id`;
  };
  const send = async (id: string, mode: "publish" | "append") => {
    const seq = nextSeq.get(id)!;
    nextSeq.set(id, seq + 1);
    if (mode === "append") {
      await appendEvent(deps, id, "progress", { step: "bench", status: "running", progress: 0.5, t: now() });
      return;
    }
    const data = { analysis_id: id, step: "bench", status: "running", progress: 0.5, t: now() };
    await deps.redis.publish(analysisChannel(config.REDIS_PREFIX, id), JSON.stringify({ seq, event: "progress", data }));
  };
  const collect = async () => (await request<{ samples: number[] }>(child, { type: "collect" }, "samples")).samples;

  const paced = async (mode: "publish" | "append") => {
    const interval = 1000 / RATE;
    const started = performance.now();
    const pending: Promise<void>[] = [];
    for (let i = 0; i < EVENTS; i++) {
      const due = started + i * interval;
      const wait = due - performance.now();
      if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait));
      pending.push(send(ids[i % ids.length]!, mode));
    }
    await Promise.all(pending);
    // Wait for the tail to arrive.
    let samples: number[] = [];
    const deadline = Date.now() + 10_000;
    while (samples.length < EVENTS && Date.now() < deadline) {
      samples = samples.concat(await collect());
      if (samples.length < EVENTS) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return samples;
  };

  const burst = async (mode: "publish" | "append") => {
    const rounds = Math.max(1, Math.floor(EVENTS / STREAMS));
    for (let r = 0; r < rounds; r++) {
      const seq = nextSeq.get(ids[0]!)!;
      const arrived = new Promise<void>((resolve) => {
        const onMessage = (m: { type: string; seq?: number }) => {
          if (m.type === "round" && m.seq === seq) {
            child.off("message", onMessage);
            resolve();
          }
        };
        child.on("message", onMessage);
      });
      await Promise.all(ids.map((id) => send(id, mode)));
      await arrived;
    }
    return collect();
  };

  await paced("publish"); // warm-up, not reported
  log(`paced, publish -> client (${EVENTS} events at ${RATE}/s over ${STREAMS} streams): ${summary(await paced("publish"))}`);
  log(`burst, publish -> client (${STREAMS} events at once, ${Math.floor(EVENTS / STREAMS)} rounds): ${summary(await burst("publish"))}`);
  await alignStore();
  log(`paced, append (store + publish) -> client (${EVENTS} events at ${RATE}/s): ${summary(await paced("append"))}`);
  log(`burst, append (store + publish) -> client (${STREAMS} at once): ${summary(await burst("append"))}`);

  await request(child, { type: "close" }, "closed");
  const deadline = Date.now() + 5000;
  while (deps.pubsub.channelCount > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
  log(`after the clients disconnected: ${deps.pubsub.channelCount} channel subscriptions left`);
  server.closeAllConnections();
  server.close();
  await deps.db.analysis.deleteMany({ where: { userId: user.id } });
  await closeDeps(deps);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
