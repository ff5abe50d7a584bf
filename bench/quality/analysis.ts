import { randomBytes } from "node:crypto";
import { performance } from "node:perf_hooks";
import { createParser } from "eventsource-parser";
import { dropDatabase, onServer, withDatabase } from "../../src/platform/database-admin.js";
import { closeDeps } from "../../src/platform/deps.js";
import { MIGRATIONS_DIR, migrate } from "../../src/platform/migrate.js";
import { deleteKeys, whenReady } from "../../src/platform/redis.js";
import { processors } from "../../workers/processors.js";
import { startWorkers } from "../../workers/runtime.js";
import { startBenchApp } from "../lib/app.js";
import type { GoldSentence } from "./data/convert.js";

/**
 * One deep analysis over the whole set, through the real service: a fresh migrated
 * database of its own on DATABASE_URL's server, the web application on a local port
 * (bench/lib/app.ts), the worker's processors in this process on real Redis. One entity;
 * every sentence ingested as one source (`POST /agent/v1/ingest/content`, 500 a batch);
 * the run starts once every row is enriched (embedding and opinion units), then
 * `POST /agent/v1/analysis/run` with `depth: "deep"` is read to its terminal event and
 * the stored analysis is read back with `GET /agent/v1/analysis/:id`.
 */
export interface DeepRun {
  analysisId: string;
  status: string;
  /** `result.data` of the stored analysis (its shape is read tolerantly by themes.ts). */
  data: unknown;
  events: Record<string, number>;
  contentIdOf: Map<string, string>;
  timings: { ingestMs: number; enrichMs: number; analysisMs: number };
}

const SECRET = "bench-quality-secret-0123456789abcdef";
const SUB = "bench-quality-user";
const BATCH = 500;
/** Enrichment that enriches no further row for this long has stopped (a job lost or failing). */
const ENRICH_STALL_MS = 60_000;
const ANALYSIS_TIMEOUT_MS = 600_000;

/** A source to store: what POST /agent/v1/ingest/content takes for one item. */
export interface BenchSource {
  id: string;
  title?: string;
  content: string;
  platform: string;
  url: string;
  author: string;
}

/** The service as a bench drives it: its HTTP API with a bearer, and the worker's database handle. */
export interface BenchService {
  call: (method: string, path: string, body?: unknown) => Promise<Record<string, unknown>>;
  /** Stores the sources for the entity (500 a batch); answers each source's content id by its `id`. */
  ingest: (entityId: string, sources: BenchSource[]) => Promise<Map<string, string>>;
  /** A statement on the service's database (the driver's pool), for a bench that must set what it measures. */
  query: (sql: string, params: unknown[]) => Promise<unknown[]>;
  /** Resolves once `count` rows of the entity are enriched; fails when enrichment stalls. */
  enriched: (entityId: string, count: number) => Promise<void>;
  /** Runs a deep analysis through the stream route and reads it back. */
  analyse: (
    entityId: string,
    question: string,
  ) => Promise<{ analysisId: string; status: string; data: unknown; events: Record<string, number> }>;
}

/**
 * Runs `work` against a fresh migrated database of its own on `serverUrl`, the web application on a
 * local port and the worker's processors in this process on real Redis; everything is removed after.
 */
export async function withBenchService<T>(serverUrl: string, work: (service: BenchService) => Promise<T>): Promise<T> {
  const stamp = randomBytes(4).toString("hex");
  const dbName = `res_bench_quality_${stamp}`;
  const databaseUrl = withDatabase(serverUrl, dbName);
  await onServer(serverUrl, (c) => c.query(`CREATE DATABASE "${dbName}"`));
  const app = await migrate(databaseUrl, MIGRATIONS_DIR)
    .then(() => startBenchApp({ databaseUrl, secret: SECRET, redisPrefix: `bench-quality-${stamp}`, poolSize: 6 }))
    .catch(async (err: unknown) => {
      await dropDatabase(serverUrl, dbName);
      throw err;
    });
  const { deps, server, base } = app;
  const workers = startWorkers(deps, processors, { concurrency: 2 });
  try {
    if (!(await whenReady(deps.redis, 5000))) throw new Error("Redis is not reachable");
    const token = await app.token(SUB, "2h");
    const call = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(`${base}${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const json = (await res.json()) as Record<string, unknown>;
      if (res.status >= 300) throw new Error(`${method} ${path} answered ${res.status}: ${JSON.stringify(json)}`);
      return json;
    };
    let runs = 0;
    return await work({
      call,
      ingest: async (entityId, sources) => {
        const contentIdOf = new Map<string, string>();
        for (let i = 0; i < sources.length; i += BATCH) {
          const batch = sources.slice(i, i + BATCH);
          const answer = await call("POST", "/agent/v1/ingest/content", { entity_id: entityId, sources: batch });
          for (const [k, id] of (answer.content_ids as string[]).entries()) contentIdOf.set(batch[k]!.id, id);
        }
        return contentIdOf;
      },
      query: async (sql, params) => (await deps.pool.query(sql, params)).rows,
      enriched: async (entityId, count) => {
        let progress = { enriched: -1, at: performance.now() };
        for (;;) {
          const enriched = await deps.db.contentEnrichment.count({ where: { entityId, enrichedAt: { not: null } } });
          if (enriched >= count) return;
          const now = performance.now();
          if (enriched !== progress.enriched) progress = { enriched, at: now };
          else if (now - progress.at > ENRICH_STALL_MS) throw new Error(`enrichment stalled at ${enriched} of ${count} rows`);
          await new Promise((r) => setTimeout(r, 250));
        }
      },
      analyse: async (entityId, question) => {
        const events = await streamRun(`${base}/agent/v1/analysis/run`, token, {
          question,
          entity_id: entityId,
          depth: "deep",
          request_id: `bench-quality-${stamp}-${runs++}`,
        });
        if (!events.analysisId) throw new Error("the run stream named no analysis");
        const record = await call("GET", `/agent/v1/analysis/${events.analysisId}`);
        const result = record.result as { status?: string; data?: unknown } | null;
        return { analysisId: events.analysisId, status: String(record.status), data: result?.data ?? null, events: events.counts };
      },
    });
  } finally {
    server.closeAllConnections();
    server.close();
    await workers.close();
    await deleteKeys(deps.redis, `${deps.config.REDIS_PREFIX}:*`).catch(() => 0);
    await closeDeps(deps);
    await dropDatabase(serverUrl, dbName);
  }
}

export async function runDeepAnalysis(sentences: GoldSentence[], question: string, serverUrl: string): Promise<DeepRun> {
  return withBenchService(serverUrl, async (service) => {
    const entity = await service.call("POST", "/api/entities", { name: "Acme", kind: "product" });
    const entityId = entity.id as string;
    const t0 = performance.now();
    const contentIdOf = await service.ingest(
      entityId,
      sentences.map((s) => ({
        id: s.id,
        platform: "web",
        url: `https://reviews.example.com/${s.domain}/${encodeURIComponent(s.id)}`,
        content: s.text,
        author: `reviewer-${s.id}`,
      })),
    );
    const ingestMs = performance.now() - t0;
    const t1 = performance.now();
    await service.enriched(entityId, sentences.length);
    const enrichMs = performance.now() - t1;
    const t2 = performance.now();
    const run = await service.analyse(entityId, question);
    const analysisMs = performance.now() - t2;
    return { ...run, contentIdOf, timings: { ingestMs, enrichMs, analysisMs } };
  });
}

/** Reads the run's event stream until the server ends it; answers the analysis id and the count of each event. */
async function streamRun(
  url: string,
  token: string,
  body: unknown,
): Promise<{ analysisId: string | null; counts: Record<string, number> }> {
  const res = await fetch(url, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, accept: "text/event-stream", "content-type": "application/json" },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(ANALYSIS_TIMEOUT_MS),
  });
  if (!res.headers.get("content-type")?.startsWith("text/event-stream") || !res.body) {
    throw new Error(`the run answered ${res.status}: ${await res.text()}`);
  }
  const counts: Record<string, number> = {};
  let terminal: Record<string, unknown> | null = null;
  const parser = createParser({
    onEvent: (e) => {
      const name = e.event ?? "message";
      counts[name] = (counts[name] ?? 0) + 1;
      if (name === "result" || name === "error") terminal = JSON.parse(e.data) as Record<string, unknown>;
    },
  });
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    parser.feed(value);
  }
  if (!terminal) throw new Error(`the run stream ended without a result; events: ${JSON.stringify(counts)}`);
  const ended = terminal as Record<string, unknown>;
  if (counts.error) throw new Error(`the analysis failed: ${JSON.stringify(ended)}`);
  return { analysisId: res.headers.get("x-analysis-id") ?? (ended.analysis_id as string | undefined) ?? null, counts };
}
