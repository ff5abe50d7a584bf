/**
 * Search latency over 1,000,000 stored originals.
 *
 *   npx tsx bench/search/index.ts [--reseed] [--requests 100]
 *
 * Seeds a database of its own (`res_bench_search` on DATABASE_URL's server; reused when
 * already seeded) with set-based `INSERT … SELECT generate_series` statements: 900,000
 * rows in the measured user's workspace (5 entities, 8 platforms, two years of dates)
 * and 100,000 in another tenant's. Texts are drawn from a 5,000-word vocabulary with a
 * Zipf-like skew; product words ("pricing", "onboarding", …) sit at ranks that put each
 * in a few percent of rows. Then the real web application answers
 * `POST /agent/v1/search` over HTTP with a user bearer, for query classes from selective
 * to broad; each class is also timed in-process (the provider's SQL alone).
 */
import { performance } from "node:perf_hooks";
import pg from "pg";
import { storedProvider } from "../../src/insights/search/providers/stored.js";
import { ensureDatabase, withDatabase } from "../../src/platform/database-admin.js";
import { closeDeps } from "../../src/platform/deps.js";
import { MIGRATIONS_DIR, migrate } from "../../src/platform/migrate.js";
import { startBenchApp } from "../lib/app.js";

const args = process.argv.slice(2);
const RESEED = args.includes("--reseed");
const REQUESTS = args.includes("--requests") ? Number(args[args.indexOf("--requests") + 1]) || 100 : 100;
const TOTAL = 1_000_000;
const MINE = 900_000;
const BATCH = 50_000;
const SECRET = "bench-search-secret-0123456789abcdef";
const SUB = "bench-search-user";

const serverUrl = process.env.DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";
const DB_URL = withDatabase(serverUrl, "res_bench_search");
const log = (line: string) => process.stdout.write(`${line}\n`);

function summary(samples: number[]) {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
  return { n: sorted.length, p50: at(50), p95: at(95), p99: at(99), max: sorted.at(-1)! };
}
const fmt = (s: ReturnType<typeof summary>) =>
  `n=${s.n}  p50 ${s.p50.toFixed(1)} ms  p95 ${s.p95.toFixed(1)} ms  p99 ${s.p99.toFixed(1)} ms  max ${s.max.toFixed(1)} ms`;

/** Deterministic pseudo-words (consonant-vowel syllables) plus product words at chosen ranks. */
function vocabulary(): string[] {
  const consonants = "bdfgklmnprstvz";
  const vowels = "aeiou";
  // mulberry32: a small deterministic PRNG.
  let seed = 20261121;
  const rand = () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const words = new Set<string>();
  while (words.size < 5000) {
    let w = "";
    const syllables = 2 + Math.floor(rand() * 3);
    for (let i = 0; i < syllables; i++)
      w += consonants[Math.floor(rand() * consonants.length)]! + vowels[Math.floor(rand() * vowels.length)]!;
    words.add(w);
  }
  const list = [...words];
  const product = ["pricing", "support", "onboarding", "dashboard", "billing", "invoice", "latency", "crash", "login", "export"];
  for (const [i, w] of product.entries()) list.splice(120 + i * 40, 0, w);
  return list;
}

async function seed(pool: pg.Pool, vocab: string[]): Promise<void> {
  const { rows } = await pool.query<{ n: string }>("SELECT count(*)::text AS n FROM content_store");
  if (!RESEED && rows[0]?.n === String(TOTAL)) {
    log(`corpus: reusing ${TOTAL} rows already seeded`);
    return;
  }
  const started = performance.now();
  await pool.query("TRUNCATE content_store, entities, workspace_members, workspaces, users CASCADE");
  const mine = await pool.query<{ id: string }>("INSERT INTO users (id, sub) VALUES (gen_random_uuid(), $1) RETURNING id", [SUB]);
  const other = await pool.query<{ id: string }>(
    "INSERT INTO users (id, sub) VALUES (gen_random_uuid(), 'bench-search-other') RETURNING id",
  );
  const tenants: { workspace: string; entities: string[]; count: number }[] = [];
  for (const [userId, count] of [
    [mine.rows[0]!.id, MINE],
    [other.rows[0]!.id, TOTAL - MINE],
  ] as const) {
    const ws = await pool.query<{ id: string }>("INSERT INTO workspaces (id, name) VALUES (gen_random_uuid(), 'bench') RETURNING id");
    const workspace = ws.rows[0]!.id;
    await pool.query("INSERT INTO workspace_members (workspace_id, user_id, role) VALUES ($1, $2, 'owner')", [workspace, userId]);
    const entities: string[] = [];
    for (let i = 0; i < 5; i++) {
      const e = await pool.query<{ id: string }>(
        "INSERT INTO entities (id, workspace_id, name) VALUES (gen_random_uuid(), $1, $2) RETURNING id",
        [workspace, `Entity ${i}`],
      );
      entities.push(e.rows[0]!.id);
    }
    tenants.push({ workspace, entities, count });
  }

  // Bulk load without the full-text index, then build it once.
  await pool.query("DROP INDEX IF EXISTS content_store_search_vector_idx");
  const platforms = ["reddit", "twitter", "github", "hackernews", "web", "youtube", "linkedin", "meetingnotes"];
  let offset = 0;
  for (const tenant of tenants) {
    for (let from = 1; from <= tenant.count; from += BATCH) {
      const to = Math.min(tenant.count, from + BATCH - 1);
      await pool.query(
        `INSERT INTO content_store (id, entity_id, workspace_id, kind, platform, url, title, content, author, published_at,
                                    content_hash, dedup_key, created_at)
         SELECT gen_random_uuid(), ($1::uuid[])[1 + g % 5], $2::uuid, 'source', ($3::text[])[1 + g % 8],
                'https://example.com/p/' || ($4::int + g),
                (SELECT string_agg(($5::text[])[1 + floor(5000 * power(random(), 2.5))::int], ' ') FROM generate_series(1, 4 + g % 4)),
                (SELECT string_agg(($5::text[])[1 + floor(5000 * power(random(), 2.5))::int], ' ') FROM generate_series(1, 25 + g % 40)),
                'author' || (g % 5000),
                CASE WHEN g % 10 = 0 THEN NULL ELSE timestamptz '2026-11-01' - (g % 730) * interval '1 day' END,
                md5(($4::int + g)::text), 'bench:' || ($4::int + g), timestamptz '2026-11-01' - (g % 900) * interval '1 day'
         FROM generate_series($6::int, $7::int) g`,
        [tenant.entities, tenant.workspace, platforms, offset, vocab, from, to],
      );
      log(`  inserted ${offset + to} rows (${((performance.now() - started) / 1000).toFixed(0)} s)`);
    }
    offset += tenant.count;
  }
  log("  building the GIN index on search_vector ...");
  await pool.query("SET maintenance_work_mem = '512MB'");
  await pool.query('CREATE INDEX "content_store_search_vector_idx" ON "content_store" USING GIN ("search_vector")');
  await pool.query("VACUUM ANALYZE content_store");
  log(`corpus: ${TOTAL} rows seeded in ${((performance.now() - started) / 1000).toFixed(0)} s`);
}

interface QueryCase {
  name: string;
  body: { query: string; platforms?: string[]; date_from?: string; limit?: number };
}

async function main() {
  await ensureDatabase(DB_URL);
  await migrate(DB_URL, MIGRATIONS_DIR);
  const vocab = vocabulary();
  const pool = new pg.Pool({ connectionString: DB_URL, max: 2 });
  await seed(pool, vocab);
  const matches = async (q: string) =>
    Number(
      (
        await pool.query<{ n: string }>(
          "SELECT count(*)::text AS n FROM content_store WHERE search_vector @@ websearch_to_tsquery('english', $1)",
          [q],
        )
      ).rows[0]!.n,
    );

  const cases: QueryCase[] = [
    { name: "one product word", body: { query: "pricing" } },
    { name: "two product words", body: { query: "pricing support" } },
    { name: "quoted phrase", body: { query: '"onboarding dashboard"' } },
    { name: "rare word", body: { query: vocab[4000]! } },
    { name: "three words, no row has all", body: { query: `billing ${vocab[3000]} ${vocab[2500]}` } },
    { name: "word OR word", body: { query: "crash or latency" } },
    { name: "product word + platforms", body: { query: "pricing", platforms: ["reddit", "news"] } },
    { name: "product word + date_from", body: { query: "invoice", date_from: "2026-09-01" } },
    { name: "product word, limit 200", body: { query: "login", limit: 200 } },
    { name: "very common word (worst case)", body: { query: vocab[3]! } },
  ];
  for (const c of cases)
    log(`  ${c.name.padEnd(32)} ${JSON.stringify(c.body.query).padEnd(28)} matches ${await matches(c.body.query)} rows`);
  await pool.end();

  const { deps, server, base, token: mint } = await startBenchApp({ databaseUrl: DB_URL, secret: SECRET, redisPrefix: "bench-search" });
  const token = await mint(SUB);
  const user = await deps.db.user.findUniqueOrThrow({ where: { sub: SUB } });
  const provider = storedProvider(deps.db);

  const http = async (body: QueryCase["body"]) => {
    const t0 = performance.now();
    const res = await fetch(`${base}/agent/v1/search`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    const json = (await res.json()) as { count: number };
    if (res.status !== 200) throw new Error(`search answered ${res.status}: ${JSON.stringify(json)}`);
    return { ms: performance.now() - t0, count: json.count };
  };

  // Warm-up: one pass over every case.
  for (const c of cases) await http(c.body);

  const all: number[] = [];
  const typical: number[] = [];
  log(`\nPOST /agent/v1/search over HTTP, ${REQUESTS} sequential requests per case (results returned):`);
  for (const c of cases) {
    const samples: number[] = [];
    let count = 0;
    for (let i = 0; i < REQUESTS; i++) {
      const r = await http(c.body);
      samples.push(r.ms);
      count = r.count;
    }
    all.push(...samples);
    if (!c.name.includes("worst case")) typical.push(...samples);
    log(`  ${c.name.padEnd(32)} ${fmt(summary(samples))}  (${count} results)`);
  }
  log(`  all cases but the worst case:    ${fmt(summary(typical))}`);
  log(`  all cases:                       ${fmt(summary(all))}`);

  log(`\nThe provider's SQL alone (in-process, ${Math.min(REQUESTS, 50)} calls per case):`);
  for (const c of cases) {
    const samples: number[] = [];
    for (let i = 0; i < Math.min(REQUESTS, 50); i++) {
      const t0 = performance.now();
      await provider.search({
        userId: user.id,
        query: c.body.query,
        platforms: c.body.platforms ? c.body.platforms.flatMap((p) => (p === "news" ? ["web", "hackernews"] : [p])) : undefined,
        limit: c.body.limit ?? 20,
        dateFrom: c.body.date_from ? new Date(c.body.date_from) : undefined,
      });
      samples.push(performance.now() - t0);
    }
    log(`  ${c.name.padEnd(32)} ${fmt(summary(samples))}`);
  }

  server.close();
  await closeDeps(deps);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
