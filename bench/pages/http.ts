/**
 * The shared pages end to end: `GET /share/{token}` over HTTP on the real web application.
 *
 *   npx tsx bench/pages/http.ts [--requests 200]
 *
 * Creates a database of its own afresh on every run (`res_bench_pages` on DATABASE_URL's server,
 * dropped, created and migrated like production; REDIS_URL for the app) and seeds: a user who owns a
 * workspace, one company with 2,000 enriched originals over the last 60 days (opinion units as the
 * enrichment writes them, three coverage records), a completed analysis of the company whose result
 * is the render bench's model (bench/pages/index.ts: 40 insights × 6 quotes, checked against
 * `ResultData`), and share links made with `createShareLink` for the analysis and the entity, plus
 * one for the analysis that is then revoked. Starts the app on a local port and, after 20 warm-up
 * requests, sends `--requests` sequential GETs to each page, reading the server's own time from
 * `Server-Timing: render;dur=…` (token lookup, the page's database reads and rendering) and the
 * client's wall clock. Target: the analysis page's p95 server time under 100 ms.
 */
import { cpus, loadavg } from "node:os";
import { performance } from "node:perf_hooks";
import pg from "pg";
import { createShareLink, revokeShareLink } from "../../src/delivery/share/links.js";
import { ResultData } from "../../src/insights/analysis/schemas.js";
import { dropDatabase, ensureDatabase, withDatabase } from "../../src/platform/database-admin.js";
import { closeDeps } from "../../src/platform/deps.js";
import { MIGRATIONS_DIR, migrate } from "../../src/platform/migrate.js";
import { generateRows, insertRows } from "../intelligence/corpus.js";
import { startBenchApp } from "../lib/app.js";
import { analysisModel } from "./index.js";

const args = process.argv.slice(2);
const REQUESTS = Number(args[args.indexOf("--requests") + 1] ?? 0) || 200;
const WARMUP = 20;
const ORIGINALS = 2_000;
const DAYS = 60;
const INSIGHTS = 40;
const QUOTES_EACH = 6;
const TARGET_MS = 100;
const SECRET = "bench-pages-secret-0123456789abcdef";
const SUB = "bench-pages-user";
const DB_NAME = "res_bench_pages";

const serverUrl = process.env.DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";
const DB_URL = withDatabase(serverUrl, DB_NAME);

const log = (line: string) => process.stdout.write(`${line}\n`);
const ms = (x: number) => `${x.toFixed(1)} ms`;
const machine = () =>
  `${cpus().length} cores, load average ${loadavg()
    .map((x) => x.toFixed(1))
    .join(" ")}`;

function summary(samples: number[]) {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number;
  return { n: sorted.length, p50: at(50), p95: at(95), max: sorted.at(-1) as number };
}

interface Seeded {
  userId: string;
  entityId: string;
  analysisId: string;
}

async function seed(pool: pg.Pool): Promise<Seeded> {
  const client = await pool.connect();
  try {
    const userId = (
      await client.query<{ id: string }>("INSERT INTO users (id, sub) VALUES (gen_random_uuid(), $1) RETURNING id::text", [SUB])
    ).rows[0]?.id as string;
    const workspaceId = (
      await client.query<{ id: string }>("INSERT INTO workspaces (id, name) VALUES (gen_random_uuid(), 'Bench') RETURNING id::text")
    ).rows[0]?.id as string;
    await client.query("INSERT INTO workspace_members (workspace_id, user_id, role) VALUES ($1, $2, 'owner')", [workspaceId, userId]);
    const entityId = (
      await client.query<{ id: string }>(
        `INSERT INTO entities (id, workspace_id, kind, name, platforms, updated_at)
         VALUES (gen_random_uuid(), $1, 'company', 'Acme Notes', ARRAY['reddit','hackernews','github','web','twitter'], now())
         RETURNING id::text`,
        [workspaceId],
      )
    ).rows[0]?.id as string;

    const rows = generateRows(20261126, ORIGINALS, DAYS, "acme", { pricing: "complaint", sync: "praise" });
    await insertRows(client, { id: entityId, workspaceId }, rows);
    for (const [collector, state] of [
      ["reddit", "exhaustive"],
      ["hackernews", "bounded"],
      ["github", "sampled"],
    ]) {
      const record = await client.query<{ id: string }>(
        `INSERT INTO coverage_records (id, entity_id, run_id, collector, collection_scope, coverage_state, query, updated_at)
         VALUES (gen_random_uuid(), $1, 'bench-run', $2, 'collection_job:brief:last_90_days', $3, 'acme', now()) RETURNING id::text`,
        [entityId, collector, state],
      );
      await client.query(
        `INSERT INTO coverage_targets (id, coverage_record_id, position, target, target_type, status, items_found, items_stored, reached_end)
         VALUES (gen_random_uuid(), $1, 0, 'acme', 'search_query', $2, 500, 480, $3)`,
        [record.rows[0]?.id, state, state === "exhaustive"],
      );
    }

    // The render bench's analysis, its quotes pointing at stored originals of the entity (the page reads
    // only the analysis row, but the result should be one the service could have written).
    const model = analysisModel(INSIGHTS, QUOTES_EACH);
    const result = model.analysis.result;
    if (!result) throw new Error("the analysis model has no result");
    const idOf = new Map<string, string>();
    for (const e of result.data.evidence) idOf.set(e.content_id, (rows[(e.number * 7) % rows.length] as (typeof rows)[number]).id);
    const cite = <T extends { content_id: string }>(x: T): T => ({ ...x, content_id: idOf.get(x.content_id) ?? x.content_id });
    const data = ResultData.parse({
      ...result.data,
      citations: result.data.citations.map(cite),
      evidence: result.data.evidence.map(cite),
      insights: result.data.insights.map((it) => ({ ...it, evidence: it.evidence.map(cite) })),
    });
    if (data.insights.length !== INSIGHTS || data.evidence.length !== INSIGHTS * QUOTES_EACH) throw new Error("unexpected analysis size");
    const analysisId = (
      await client.query<{ id: string }>(
        `INSERT INTO analyses (id, user_id, workspace_id, entity_id, question, search_mode, platforms, depth, status, result,
           created_at, updated_at, finished_at)
         VALUES (gen_random_uuid(), $1, $2, $3, $4, 'multi_source', $5, 'deep', 'completed', $6::jsonb,
           now() - interval '15 minutes', now(), now())
         RETURNING id::text`,
        [userId, workspaceId, entityId, model.analysis.question, model.analysis.platforms, JSON.stringify({ status: "completed", data })],
      )
    ).rows[0]?.id as string;
    await client.query("VACUUM ANALYZE content_store");
    await client.query("VACUUM ANALYZE opinion_units");
    return { userId, entityId, analysisId };
  } finally {
    client.release();
  }
}

async function main() {
  log(`machine: ${machine()} at start (node ${process.version})`);
  await dropDatabase(serverUrl, DB_NAME);
  await ensureDatabase(DB_URL);
  await migrate(DB_URL, MIGRATIONS_DIR);
  const pool = new pg.Pool({ connectionString: DB_URL, max: 2 });
  const seededAt = performance.now();
  const { userId, entityId, analysisId } = await seed(pool);
  const bytes = await pool.query<{ originals: string; units: string; result: string }>(
    `SELECT (SELECT count(*) FROM content_store WHERE entity_id = $1)::text AS originals,
            (SELECT count(*) FROM opinion_units WHERE entity_id = $1)::text AS units,
            (SELECT pg_column_size(result)::text FROM analyses WHERE id = $2) AS result`,
    [entityId, analysisId],
  );
  const sizes = bytes.rows[0];
  log(
    `seeded in ${((performance.now() - seededAt) / 1000).toFixed(1)} s: ${sizes?.originals} originals over ${DAYS} days, ${sizes?.units} opinion units; ` +
      `analysis of ${INSIGHTS} insights × ${QUOTES_EACH} quotes (result ${(Number(sizes?.result) / 1024).toFixed(0)} KB stored)`,
  );

  const app = await startBenchApp({ databaseUrl: DB_URL, secret: SECRET, redisPrefix: "bench-pages" });
  try {
    const db = app.deps.db;
    const week = 7 * 86_400;
    const analysisLink = await createShareLink(db, userId, { resource: "analysis", id: analysisId, expires_in: week }, app.base);
    const entityLink = await createShareLink(db, userId, { resource: "entity", id: entityId, expires_in: week }, app.base);
    const revoked = await createShareLink(db, userId, { resource: "analysis", id: analysisId, expires_in: week }, app.base);
    await revokeShareLink(db, userId, revoked.id);

    const get = async (url: string, status: number) => {
      const t0 = performance.now();
      const res = await fetch(url);
      const body = await res.text();
      const wall = performance.now() - t0;
      if (res.status !== status) throw new Error(`${url} answered ${res.status}, expected ${status}: ${body.slice(0, 300)}`);
      const dur = /render;dur=([\d.]+)/.exec(res.headers.get("server-timing") ?? "")?.[1];
      if (dur === undefined) throw new Error(`${url} sent no Server-Timing render duration`);
      return { server: Number(dur), wall, bytes: Buffer.byteLength(body), body };
    };

    // The pages show what was seeded: every insight of the analysis, and themes and volume for the entity.
    const first = await get(analysisLink.url, 200);
    const lastTitle = `Aspect ${INSIGHTS} `;
    if (!first.body.includes(lastTitle)) throw new Error("the analysis page lacks its last insight");
    const entityPage = await get(entityLink.url, 200);
    if (entityPage.body.includes("No themes in this window.")) throw new Error("the entity page shows no themes");
    log(`\nfirst request of the process (analysis page): server ${ms(first.server)}, wall ${ms(first.wall)}`);
    log(`${REQUESTS} sequential requests per page after ${WARMUP} warm-up requests`);
    const results: { name: string; p95: number }[] = [];
    for (const [name, url, status] of [
      [`analysis (${INSIGHTS} insights × ${QUOTES_EACH} quotes)`, analysisLink.url, 200],
      [`entity (${ORIGINALS} originals, ${DAYS} days)`, entityLink.url, 200],
      ["revoked token (404 page)", revoked.url, 404],
    ] as const) {
      for (let i = 0; i < WARMUP; i++) await get(url, status);
      const server: number[] = [];
      const wall: number[] = [];
      let size = 0;
      for (let i = 0; i < REQUESTS; i++) {
        const r = await get(url, status);
        server.push(r.server);
        wall.push(r.wall);
        size = r.bytes;
      }
      const s = summary(server);
      const w = summary(wall);
      results.push({ name, p95: s.p95 });
      log(
        `${name.padEnd(36)} server p50 ${ms(s.p50).padStart(8)}  p95 ${ms(s.p95).padStart(8)}  max ${ms(s.max).padStart(8)}   ` +
          `wall p50 ${ms(w.p50).padStart(8)}  p95 ${ms(w.p95).padStart(8)}   ${(size / 1024).toFixed(1).padStart(6)} KB`,
      );
    }
    const analysis = results[0] as { p95: number };
    log(`\nanalysis target: p95 server time under ${TARGET_MS} ms — ${analysis.p95 < TARGET_MS ? "met" : "MISSED"} (${ms(analysis.p95)})`);
    log(`machine: ${machine()} at end`);
  } finally {
    app.server.close();
    await closeDeps(app.deps);
    await pool.end();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
