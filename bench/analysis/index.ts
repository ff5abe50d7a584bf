/**
 * Analysis at scale: a deep analysis over one entity with 10,000 and with 100,000 stored
 * originals, through the service as it runs in production.
 *
 *   npx tsx bench/analysis/index.ts [--sizes 10000,100000] [--runs 3] [--reseed] [--scale 10000000]
 *
 * Seeds a database of its own (`res_bench_analysis` on DATABASE_URL's server; reused while
 * the corpus and the opinion-unit code are unchanged) with synthetic product feedback
 * (bench/analysis/corpus.ts), enriched by the service's own enrichment (embeddings and
 * opinion units, as the worker stores them after ingest). Then a redis-server of its own,
 * the Procfile's release, web and worker processes, and `POST /agent/v1/analysis/run`
 * (`depth: deep`) over HTTP, parsed as an agent parses the stream. Prints, per corpus size:
 * time to the first progress event, time to the result, the result's status and themes,
 * and the worker's peak RSS while the analyses ran; then the intelligence summary, the export
 * completeness audit and pages of 50 of an insight's sources (bench/analysis/sources.ts) of each
 * entity over HTTP. After seeding it prints the disk each stored original takes (its
 * row, its enrichment row and its units, each table with its indexes). `--scale N` adds an entity of N originals made of
 * copies of the largest size's enriched rows (set-based, scale.ts; the seeding method of the 10 M
 * figures).
 */
import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { createParser } from "eventsource-parser";
import pg from "pg";
import { createBulkEmbedder } from "../../src/insights/embed/provider.js";
import { enrichContent } from "../../src/insights/enrichment/service.js";
import { loadConfig } from "../../src/platform/config.js";
import { ensureDatabase, withDatabase } from "../../src/platform/database-admin.js";
import { closeDeps, createDeps } from "../../src/platform/deps.js";
import { MIGRATIONS_DIR, migrate } from "../../src/platform/migrate.js";
import { bearer } from "../lib/bearer.js";
import { exitCode, freePort, procfileCommand, root, runEntry, runProcess, sampleRss, startRedis, waitFor } from "../load/services.js";
import { feedbackPost, seeded } from "./corpus.js";
import { replicateEntity, restoreIndexes } from "./scale.js";
import { type InsightRef, RARE_SOURCES, rareTheme, timeSources, widestAndNarrowest } from "./sources.js";

const args = process.argv.slice(2);
const opt = (name: string) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
const SIZES = (opt("--sizes") ?? "10000,100000").split(",").map(Number);
const RUNS = Number(opt("--runs") ?? 3);
const RESEED = args.includes("--reseed");
/** An entity of this many originals made of copies of the largest size's enriched rows (scale.ts). */
const SCALE = Number(opt("--scale") ?? 0);
const SECRET = "bench-analysis-secret-0123456789abcdef";
const SUB = "bench-analysis-user";
const QUESTIONS = [
  "What are the biggest complaints about Acme Notes and what do people like?",
  "What do people praise and complain about?",
  "Which problems come up most often, and what works well?",
  "What should the product team fix first?",
  "How do people feel about pricing, sync and support?",
  // Focused questions (focus.ts): the sources of a kind and the statements of a kind are read first.
  "Which features do users request most?",
  "What bugs do users report most?",
  "Why do users give up or switch to something else?",
];

const serverUrl = process.env.DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";
const DB_URL = withDatabase(serverUrl, "res_bench_analysis");
const log = (line = "") => process.stdout.write(`${line}\n`);

/** What the stored corpus depends on: a change to either re-seeds (texts) or re-enriches (units). */
const version = (file: string) =>
  createHash("sha256")
    .update(readFileSync(path.join(root, file)))
    .digest("hex")
    .slice(0, 16);
const CORPUS_VERSION = version("bench/analysis/corpus.ts");
const UNITS_VERSION = createHash("sha256")
  .update(
    readdirSync(path.join(root, "src/insights/enrichment"), { recursive: true, withFileTypes: true })
      .filter((f) => f.isFile())
      .map((f) => path.relative(root, path.join(f.parentPath, f.name)))
      .sort()
      .map(version)
      .join(),
  )
  .digest("hex")
  .slice(0, 16);

// The table is made by whichever of these runs first (a --reseed starts from a fresh schema).
const META_TABLE = "CREATE TABLE IF NOT EXISTS bench_meta (key text PRIMARY KEY, value text NOT NULL)";
async function meta(pool: pg.Pool, key: string): Promise<string | undefined> {
  await pool.query(META_TABLE);
  return (await pool.query<{ value: string }>("SELECT value FROM bench_meta WHERE key = $1", [key])).rows[0]?.value;
}
async function setMeta(pool: pg.Pool, key: string, value: string) {
  await pool.query(META_TABLE);
  await pool.query("INSERT INTO bench_meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = $2", [key, value]);
}

/** One entity per corpus size, each with exactly `size` stored originals. */
async function seedTexts(pool: pg.Pool): Promise<Map<number, string>> {
  const key = `corpus:${SIZES.join(",")}`;
  const entities = new Map<number, string>();
  if (!RESEED && (await meta(pool, key)) === CORPUS_VERSION) {
    for (const size of SIZES) {
      const row = (await pool.query<{ id: string }>("SELECT id FROM entities WHERE name = $1", [`Acme Notes ${size}`])).rows[0];
      if (row) entities.set(size, row.id);
    }
    if (entities.size === SIZES.length) {
      log(`corpus: reusing ${SIZES.join(" + ")} stored originals`);
      return entities;
    }
  }
  const started = performance.now();
  await pool.query("TRUNCATE content_store, opinion_units, entities, workspace_members, workspaces, users CASCADE");
  const user = (await pool.query<{ id: string }>("INSERT INTO users (id, sub) VALUES (gen_random_uuid(), $1) RETURNING id", [SUB]))
    .rows[0]!;
  const ws = (await pool.query<{ id: string }>("INSERT INTO workspaces (id, name) VALUES (gen_random_uuid(), 'bench') RETURNING id"))
    .rows[0]!;
  await pool.query("INSERT INTO workspace_members (workspace_id, user_id, role) VALUES ($1, $2, 'owner')", [ws.id, user.id]);
  const platforms = ["reddit", "hackernews", "github", "web"];
  for (const size of SIZES) {
    const entity = (
      await pool.query<{ id: string }>("INSERT INTO entities (id, workspace_id, name) VALUES (gen_random_uuid(), $1, $2) RETURNING id", [
        ws.id,
        `Acme Notes ${size}`,
      ])
    ).rows[0]!;
    entities.set(size, entity.id);
    const rand = seeded(size);
    for (let from = 0; from < size; from += 5000) {
      const n = Math.min(5000, size - from);
      const posts = Array.from({ length: n }, () => feedbackPost(rand, "Acme Notes"));
      await pool.query(
        `INSERT INTO content_store (id, entity_id, workspace_id, kind, platform, url, title, content, author, published_at,
                                    content_hash, dedup_key, created_at)
         SELECT gen_random_uuid(), $1::uuid, $2::uuid, 'source', ($3::text[])[1 + (g.i % 4)],
                'https://feedback.example.com/' || $4::text || '/' || g.i, t.title, t.content, 'user' || (g.i % 7919),
                timestamptz '2026-11-01' - (g.i % 300) * interval '1 day', md5($4::text || ':' || g.i), 'bench:' || g.i,
                timestamptz '2026-11-01' - (g.i % 300) * interval '1 day'
         FROM unnest($5::text[], $6::text[]) WITH ORDINALITY AS t(title, content, i), LATERAL (SELECT $7::int + t.i AS i) g`,
        [entity.id, ws.id, platforms, String(size), posts.map((p) => p.title), posts.map((p) => p.content), from],
      );
    }
    log(`  ${size} originals stored for ${entity.id} (${((performance.now() - started) / 1000).toFixed(0)} s)`);
  }
  await pool.query("VACUUM ANALYZE content_store");
  await setMeta(pool, key, CORPUS_VERSION);
  await pool.query("DELETE FROM bench_meta WHERE key = 'units'");
  return entities;
}

/** Enrichment as the worker runs it after ingest: embeddings and opinion units for every row. */
async function enrich(pool: pg.Pool): Promise<void> {
  if (!RESEED && (await meta(pool, "units")) === UNITS_VERSION) {
    log("opinion units: reusing the stored ones");
    return;
  }
  const started = performance.now();
  // A scaled entity is made of copies of these units: it goes with them, its originals first (nothing cascades from
  // an entity to its originals), or the enrichment below would read its millions of originals too.
  await pool.query("DELETE FROM opinion_units");
  await pool.query("DELETE FROM content_enrichment");
  await pool.query("DELETE FROM content_store WHERE entity_id IN (SELECT id FROM entities WHERE name LIKE 'Acme Notes scaled %')");
  await pool.query("DELETE FROM entities WHERE name LIKE 'Acme Notes scaled %'");
  const config = loadConfig({ DATABASE_URL: DB_URL, AUTH_JWT_SECRET: SECRET, LOG_LEVEL: "silent", DATABASE_POOL_SIZE: "4" });
  const deps = createDeps(config, "bench");
  const embedder = createBulkEmbedder(config);
  try {
    const ids = (await pool.query<{ id: string }>("SELECT id FROM content_store ORDER BY id")).rows.map((r) => r.id);
    let units = 0;
    for (let i = 0; i < ids.length; i += 1000) {
      units += (await enrichContent(deps.pool, embedder, ids.slice(i, i + 1000))).unitsInserted;
      if ((i / 1000) % 10 === 9) log(`  enriched ${i + 1000} rows (${((performance.now() - started) / 1000).toFixed(0)} s)`);
    }
    log(`opinion units: ${units} for ${ids.length} rows in ${((performance.now() - started) / 1000).toFixed(0)} s`);
  } finally {
    await closeDeps(deps);
  }
  await pool.query("VACUUM ANALYZE opinion_units");
  await setMeta(pool, "units", UNITS_VERSION);
}

/** The `--scale` entity: copies of the largest size's entity, reused while its corpus and units are. */
async function seedScaled(pool: pg.Pool, entities: Map<number, string>): Promise<string> {
  const base = Math.max(...SIZES);
  if (SCALE % base !== 0) throw new Error(`--scale ${SCALE} is not a multiple of the largest size ${base}`);
  const name = `Acme Notes scaled ${SCALE}`;
  const key = `scale:${SCALE}`;
  const stamp = `${CORPUS_VERSION}:${UNITS_VERSION}:${base}`;
  await restoreIndexes(pool);
  const existing = (await pool.query<{ id: string; workspace_id: string }>("SELECT id, workspace_id FROM entities WHERE name = $1", [name]))
    .rows[0];
  if (existing && (await meta(pool, key)) === stamp) {
    log(`scaled entity: reusing ${SCALE.toLocaleString("en")} originals`);
    return existing.id;
  }
  const baseEntity = entities.get(base)!;
  const entity =
    existing ??
    (
      await pool.query<{ id: string }>(
        "INSERT INTO entities (id, workspace_id, name) SELECT gen_random_uuid(), workspace_id, $2 FROM entities WHERE id = $1 RETURNING id",
        [baseEntity, name],
      )
    ).rows[0]!;
  log(`scaled entity: ${SCALE / base} copies of ${base.toLocaleString("en")} enriched originals`);
  await replicateEntity(pool, baseEntity, entity.id, SCALE / base);
  await setMeta(pool, key, stamp);
  return entity.id;
}

/**
 * Disk per stored original: each table that holds an original or what enrichment derives from it (its heap with its
 * TOAST, and its indexes), over every original the database stores; printed after seeding, the `--scale` entity's
 * copies included.
 */
async function logDiskPerOriginal(pool: pg.Pool): Promise<void> {
  const originals = Number((await pool.query<{ n: string }>("SELECT count(*)::text AS n FROM content_store")).rows[0]!.n);
  const { rows } = await pool.query<{ name: string; rows: string; heap: string; indexes: string }>(
    `SELECT t.name, (SELECT reltuples::bigint FROM pg_class WHERE oid = t.name::regclass)::text AS rows,
       pg_table_size(t.name::regclass)::text AS heap, pg_indexes_size(t.name::regclass)::text AS indexes
     FROM unnest(ARRAY['content_store', 'content_enrichment', 'opinion_units']) AS t(name)`,
  );
  const per = (bytes: number) => `${Math.round(bytes / originals).toLocaleString("en")} B`;
  let total = 0;
  log(`disk per stored original (${originals.toLocaleString("en")} originals; table with its TOAST + indexes):`);
  for (const r of rows) {
    const heap = Number(r.heap);
    const indexes = Number(r.indexes);
    total += heap + indexes;
    log(`  ${r.name} (about ${Number(r.rows).toLocaleString("en")} rows): ${per(heap)} + ${per(indexes)} = ${per(heap + indexes)}`);
  }
  log(`  in all: ${per(total)} (${(total / 2 ** 30).toFixed(1)} GiB)`);
}

interface Run {
  firstProgressMs: number;
  resultMs: number;
  status: string;
  themes: string[];
  insights: InsightRef[];
}

async function analyse(base: string, token: string, entityId: string, question: string): Promise<Run> {
  const started = performance.now();
  const res = await fetch(`${base}/agent/v1/analysis/run`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, accept: "text/event-stream", "content-type": "application/json" },
    body: JSON.stringify({ entity_id: entityId, question, depth: "deep" }),
  });
  if (res.status !== 200 || !res.body) throw new Error(`analysis/run answered ${res.status}: ${await res.text()}`);
  let firstProgressMs = Number.NaN;
  let result: { status: string; data: { insights?: InsightRef[]; themes?: { title?: string; label?: string }[] } } | undefined;
  const parser = createParser({
    onEvent: (event) => {
      if (event.event === "progress" && Number.isNaN(firstProgressMs)) firstProgressMs = performance.now() - started;
      if (event.event === "result") result = JSON.parse(event.data);
      if (event.event === "error") throw new Error(`analysis failed: ${event.data}`);
    },
  });
  const decoder = new TextDecoder();
  for await (const chunk of res.body) {
    parser.feed(decoder.decode(chunk, { stream: true }));
    if (result) break;
  }
  const resultMs = performance.now() - started;
  if (!result) throw new Error("the stream ended without a result");
  const themes = (result.data.themes ?? []).map((t) => t.title ?? t.label ?? "?");
  return {
    firstProgressMs,
    resultMs,
    status: result.status,
    themes: themes.length > 0 ? themes : (result.data.insights ?? []).map((i) => i.title),
    insights: (result.data.insights ?? []).filter((i) => i.sources_url),
  };
}

async function main() {
  await ensureDatabase(DB_URL);
  await migrate(DB_URL, MIGRATIONS_DIR, () => undefined);
  const pool = new pg.Pool({ connectionString: DB_URL, max: 2 });
  const entities = await seedTexts(pool);
  await enrich(pool);
  if (SCALE > 0) entities.set(SCALE, await seedScaled(pool, entities));
  await logDiskPerOriginal(pool);
  await pool.end();

  const redis = await startRedis();
  const port = await freePort();
  const env: Record<string, string> = {
    NODE_ENV: "production",
    HOST: "127.0.0.1",
    PORT: String(port),
    DATABASE_URL: DB_URL,
    REDIS_URL: redis.url,
    REDIS_PREFIX: "bench-analysis",
    AUTH_JWT_SECRET: SECRET,
    LOG_LEVEL: "warn",
    RATE_LIMIT_PER_MINUTE: "0",
  };
  const base = `http://127.0.0.1:${port}`;
  const procs = [];
  try {
    const release = runEntry("release", "scripts/migrate.ts", env);
    if ((await exitCode(release)) !== 0) throw new Error(`release failed:\n${release.output.join("")}`);
    const web = runProcess("web", procfileCommand("web"), env);
    const worker = runProcess("worker", procfileCommand("worker"), env);
    procs.push(web, worker);
    await waitFor("the web process", async () => (await fetch(`${base}/agent/v1/health`)).status === 200);
    const token = await bearer(SECRET, SUB);
    // One warm-up analysis (module loading, first connections), not counted.
    await analyse(base, token, entities.get(SIZES[0]!)!, "What do people say?");
    // The completeness audit is for accounts an operator opened raw export to.
    const admin = runProcess(
      "admin",
      [process.execPath, "--import", "tsx", path.join(root, "scripts/admin.ts"), "enable-raw-export", SUB],
      env,
    );
    if ((await exitCode(admin)) !== 0) throw new Error(`enable-raw-export failed:\n${admin.output.join("")}`);

    log();
    log("| stored originals | run | first progress event | result | status | themes |");
    log("|---|---|---|---|---|---|");
    const peaks: string[] = [];
    /** Each size's analysis that reported the most insights: its insights' sources are read below. */
    const widest = new Map<number, Run>();
    for (const size of SCALE > 0 ? [...SIZES, SCALE] : SIZES) {
      const rss = sampleRss([worker], 100);
      for (let run = 0; run < RUNS; run++) {
        // Without a request_id every run is a new analysis; the question is the product team's, as is.
        const question = QUESTIONS[run % QUESTIONS.length]!;
        const r = await analyse(base, token, entities.get(size)!, question);
        if (r.insights.length > (widest.get(size)?.insights.length ?? 0)) widest.set(size, r);
        log(
          `| ${size.toLocaleString("en")} | ${run + 1} | ${r.firstProgressMs.toFixed(0)} ms | ${(r.resultMs / 1000).toFixed(2)} s | ${r.status} | ${r.themes.length}: ${r.themes.join("; ").slice(0, 160)} |`,
        );
      }
      rss.stop();
      peaks.push(`${size.toLocaleString("en")} originals: worker peak RSS ${rss.peak.worker?.toFixed(0)} MB`);
    }
    log();
    log("| stored originals | request | runs | best | median | worst |");
    log("|---|---|---|---|---|---|");
    for (const size of SCALE > 0 ? [...SIZES, SCALE] : SIZES) {
      const entityId = entities.get(size)!;
      for (const [name, url] of [
        ["intelligence summary, 30 days", `/agent/v1/intelligence/summary?entity_id=${entityId}&window_days=30`],
        ["intelligence summary, 365 days", `/agent/v1/intelligence/summary?entity_id=${entityId}&window_days=365`],
        ["export completeness audit", `/agent/v1/export/completeness?entity_id=${entityId}`],
      ] as const) {
        const times: number[] = [];
        for (let run = 0; run < RUNS; run++) {
          const started = performance.now();
          const res = await fetch(`${base}${url}`, { headers: { authorization: `Bearer ${token}` } });
          if (res.status !== 200) throw new Error(`${url} answered ${res.status}: ${await res.text()}`);
          await res.arrayBuffer();
          times.push(performance.now() - started);
        }
        times.sort((a, b) => a - b);
        const ms = (v: number) => `${v.toFixed(0)} ms`;
        log(
          `| ${size.toLocaleString("en")} | ${name} | ${RUNS} | ${ms(times[0]!)} | ${ms(times[Math.floor(times.length / 2)]!)} | ${ms(times.at(-1)!)} |`,
        );
      }
      const picks = widestAndNarrowest(widest.get(size)?.insights ?? []);
      // At the largest size, also a theme few of the scope's units name (found by name, not by a walk).
      if (size === Math.max(...SIZES, SCALE)) {
        const pool = new pg.Pool({ connectionString: DB_URL, max: 1 });
        try {
          picks.push([`a theme ${RARE_SOURCES} of the scope's sources name`, await rareTheme(pool, entityId, size)]);
        } finally {
          await pool.end();
        }
      }
      for (const { request, times } of await timeSources(base, token, picks, RUNS)) {
        times.sort((a, b) => a - b);
        const ms = (v: number) => `${v.toFixed(0)} ms`;
        log(
          `| ${size.toLocaleString("en")} | ${request} | ${RUNS} | ${ms(times[0]!)} | ${ms(times[Math.floor(times.length / 2)]!)} | ${ms(times.at(-1)!)} |`,
        );
      }
    }
    log();
    for (const line of peaks) log(line);
    log("targets: first progress event ≤ 200 ms, result ≤ 15 s (100,000 originals, 2 cores); at 10,000,000: result ≤ 5 s,");
    log("         intelligence summary ≤ 500 ms, export completeness audit ≤ 2 s, a page of 50 of an insight's sources < 300 ms");
  } finally {
    for (const p of procs) await p.stop();
    await redis.stop();
  }
}

await main();
