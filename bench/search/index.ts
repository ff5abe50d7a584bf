/**
 * Search latency over 1,000,000 (or `--rows`) stored originals.
 *
 *   npx tsx bench/search/index.ts [--rows 1000000] [--reseed] [--requests 100] [--seed-streams 2]
 *
 * Seeds a database of its own (`res_bench_search`, or `res_bench_search_<rows>` for another size, on
 * DATABASE_URL's server; reused when already seeded) with set-based `INSERT … SELECT generate_series`
 * statements on `--seed-streams` connections, the secondary indexes dropped and built again after the
 * load: nine rows in ten in the measured user's workspace (5 entities, 8 platforms, stored over 900 days
 * in insertion order, published over two years), the tenth another tenant's. Texts are drawn from a
 * 5,000-word vocabulary with a Zipf-like skew; product words ("pricing", "onboarding", …) sit at ranks
 * that put each in a few percent of rows. Prints the disk bytes per stored original (table and each
 * index). Then the real web application answers `POST /agent/v1/search` over HTTP with a user bearer,
 * for query classes from selective to broad; each class is also timed in-process (the provider's SQL
 * alone). Twice: without the recent search index (src/insights/search/recent-index.ts), then with it as
 * the worker builds it at the default settings (printed with its build time and size), with both phases'
 * p95 side by side and whether each class's first answer was the same (`--no-recent-index`: the first
 * phase only; `--keep-recent-index`: the index stays afterwards).
 *
 *   npx tsx bench/search/index.ts [--no-recent-index] [--keep-recent-index] */
import { performance } from "node:perf_hooks";
import pg from "pg";
import { storedProvider } from "../../src/insights/search/providers/stored.js";
import { maintainRecentIndex, RECENT_INDEX_PREFIX, recentPredicate } from "../../src/insights/search/recent-index.js";
import { dropDatabase, ensureDatabase, onServer, withDatabase } from "../../src/platform/database-admin.js";
import { closeDeps } from "../../src/platform/deps.js";
import { MIGRATIONS_DIR, migrate } from "../../src/platform/migrate.js";
import { startBenchApp } from "../lib/app.js";

const args = process.argv.slice(2);
const RESEED = args.includes("--reseed");
const REQUESTS = args.includes("--requests") ? Number(args[args.indexOf("--requests") + 1]) || 100 : 100;
const numberArg = (name: string, fallback: number) => (args.includes(name) ? Number(args[args.indexOf(name) + 1]) || fallback : fallback);
/** Stored originals: nine in ten in the measured user's workspace, the rest another tenant's. */
const TOTAL = numberArg("--rows", 1_000_000);
const SEED_STREAMS = numberArg("--seed-streams", 2);
/** Measure without the recent index only; or keep the one built for the second phase. */
const NO_RECENT = args.includes("--no-recent-index");
const KEEP_RECENT = args.includes("--keep-recent-index");
const BATCH = 50_000;
const SECRET = "bench-search-secret-0123456789abcdef";
const SUB = "bench-search-user";

const serverUrl = process.env.DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";
const DB_NAME = TOTAL === 1_000_000 ? "res_bench_search" : `res_bench_search_${TOTAL}`;
const DB_URL = withDatabase(serverUrl, DB_NAME);
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

/** Seeds TOTAL rows into a freshly migrated database: one row in ten is the other tenant's, interleaved. */
async function seed(pool: pg.Pool, vocab: string[]): Promise<void> {
  const started = performance.now();
  const tenants: { workspace: string; entities: string[] }[] = [];
  for (const sub of [SUB, "bench-search-other"]) {
    const user = await pool.query<{ id: string }>("INSERT INTO users (id, sub) VALUES (gen_random_uuid(), $1) RETURNING id", [sub]);
    const ws = await pool.query<{ id: string }>("INSERT INTO workspaces (id, name) VALUES (gen_random_uuid(), 'bench') RETURNING id");
    const workspace = ws.rows[0]!.id;
    await pool.query("INSERT INTO workspace_members (workspace_id, user_id, role) VALUES ($1, $2, 'owner')", [workspace, user.rows[0]!.id]);
    const entities: string[] = [];
    for (let i = 0; i < 5; i++) {
      const e = await pool.query<{ id: string }>(
        "INSERT INTO entities (id, workspace_id, name) VALUES (gen_random_uuid(), $1, $2) RETURNING id",
        [workspace, `Entity ${i}`],
      );
      entities.push(e.rows[0]!.id);
    }
    tenants.push({ workspace, entities });
  }
  const [mine, other] = tenants as [(typeof tenants)[0], (typeof tenants)[0]];

  // Bulk load without the secondary indexes (the GIN one above all), then build each once.
  const indexes = await pool.query<{ name: string; def: string }>(
    `SELECT indexname AS name, indexdef AS def FROM pg_indexes
     WHERE schemaname = current_schema() AND tablename = 'content_store' AND indexname <> 'content_store_pkey'`,
  );
  for (const { name } of indexes.rows) await pool.query(`DROP INDEX IF EXISTS "${name}"`);
  const platforms = ["reddit", "twitter", "github", "hackernews", "web", "youtube", "linkedin", "meetingnotes"];
  // Stored over 900 days in the order the rows arrive (created_at is when a row was stored, so it
  // follows the table's physical order, as ingest makes it); published dates are spread over two years.
  const insert = (from: number, to: number) =>
    pool.query(
      `INSERT INTO content_store (id, entity_id, workspace_id, kind, platform, url, title, content, author, published_at,
                                  content_hash, dedup_key, created_at)
       SELECT gen_random_uuid(),
              CASE WHEN g % 10 = 0 THEN ($2::uuid[])[1 + g / 10 % 5] ELSE ($1::uuid[])[1 + g % 5] END,
              CASE WHEN g % 10 = 0 THEN $4::uuid ELSE $3::uuid END,
              'source', ($5::text[])[1 + g % 8], 'https://example.com/p/' || g,
              (SELECT string_agg(($6::text[])[1 + floor(5000 * power(random(), 2.5))::int], ' ') FROM generate_series(1, 4 + g % 4)),
              (SELECT string_agg(($6::text[])[1 + floor(5000 * power(random(), 2.5))::int], ' ') FROM generate_series(1, 25 + g % 40)),
              'author' || (g % 5000),
              CASE WHEN g % 10 = 3 THEN NULL ELSE timestamptz '2026-11-01' - (g::bigint * 7919 % 730) * interval '1 day' END,
              md5(g::text), 'bench:' || g,
              timestamptz '2026-11-01' - ($9::int - g) * (interval '900 days' / $9::int)
       FROM generate_series($7::int, $8::int) g`,
      [mine.entities, other.entities, mine.workspace, other.workspace, platforms, vocab, from, to, TOTAL],
    );
  // SEED_STREAMS connections each take the next batch in turn, so batches land roughly in order.
  let next = 1;
  let inserted = 0;
  await Promise.all(
    Array.from({ length: SEED_STREAMS }, async () => {
      while (next <= TOTAL) {
        const from = next;
        const to = Math.min(TOTAL, from + BATCH - 1);
        next = to + 1;
        await insert(from, to);
        inserted += to - from + 1;
        log(`  inserted ${inserted} rows (${((performance.now() - started) / 1000).toFixed(0)} s)`);
      }
    }),
  );
  await pool.query("SET maintenance_work_mem = '512MB'");
  for (const { name, def } of indexes.rows) {
    const t0 = performance.now();
    await pool.query(def);
    log(`  built ${name} (${((performance.now() - t0) / 1000).toFixed(0)} s)`);
  }
  // A finer created_at histogram: the recency window of a broad query is read off it.
  await pool.query("ALTER TABLE content_store ALTER COLUMN created_at SET STATISTICS 1000");
  await pool.query("VACUUM ANALYZE content_store");
  log(`corpus: ${TOTAL} rows seeded in ${((performance.now() - started) / 1000).toFixed(0)} s`);
}

/** Bytes on disk per stored original: the table (with its TOAST), its indexes, and all of it. */
async function diskPerRow(pool: pg.Pool) {
  const { rows } = await pool.query<{ table: string; indexes: string; n: string }>(
    `SELECT pg_table_size('content_store')::text AS table, pg_indexes_size('content_store')::text AS indexes,
            (SELECT count(*) FROM content_store)::text AS n`,
  );
  const r = rows[0]!;
  const per = (bytes: string) => (Number(bytes) / Number(r.n)).toFixed(0);
  const gb = (bytes: string) => (Number(bytes) / 1e9).toFixed(2);
  log(
    `disk: table ${gb(r.table)} GB (${per(r.table)} B a row), indexes ${gb(r.indexes)} GB (${per(r.indexes)} B a row), ` +
      `${per(String(Number(r.table) + Number(r.indexes)))} B a row in all`,
  );
  const each = await pool.query<{ name: string; bytes: string }>(
    `SELECT indexrelid::regclass::text AS name, pg_relation_size(indexrelid)::text AS bytes FROM pg_index
     WHERE indrelid = 'content_store'::regclass ORDER BY pg_relation_size(indexrelid) DESC`,
  );
  for (const i of each.rows) log(`  ${i.name.padEnd(48)} ${gb(i.bytes)} GB (${per(i.bytes)} B a row)`);
}

interface QueryCase {
  name: string;
  body: { query: string; platforms?: string[]; date_from?: string; limit?: number };
}

/** Rows stored now, or null when the database does not exist. */
async function storedRows(): Promise<number | null> {
  const exists = await onServer(serverUrl, (c) => c.query("SELECT 1 FROM pg_database WHERE datname = $1", [DB_NAME]));
  if (exists.rowCount === 0) return null;
  const client = new pg.Client({ connectionString: DB_URL });
  await client.connect();
  try {
    return Number((await client.query<{ n: string }>("SELECT count(*)::text AS n FROM content_store")).rows[0]!.n);
  } finally {
    await client.end();
  }
}

async function main() {
  const vocab = vocabulary();
  const seeded = !RESEED && (await storedRows()) === TOTAL;
  // A new corpus starts from a freshly migrated database, so the indexes rebuilt after the load are the schema's.
  if (!seeded) await dropDatabase(serverUrl, DB_NAME);
  await ensureDatabase(DB_URL);
  await migrate(DB_URL, MIGRATIONS_DIR);
  const pool = new pg.Pool({ connectionString: DB_URL, max: Math.max(2, SEED_STREAMS) });
  if (seeded) log(`corpus: reusing ${TOTAL} rows already seeded`);
  else await seed(pool, vocab);
  await diskPerRow(pool);
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
    const json = (await res.json()) as { count: number; results: { content_id?: string }[] };
    if (res.status !== 200) throw new Error(`search answered ${res.status}: ${JSON.stringify(json)}`);
    return { ms: performance.now() - t0, count: json.count, ids: json.results.map((r) => r.content_id ?? "") };
  };

  /** Every case over HTTP, then the provider's SQL alone; the first answer's ids per case, to compare phases. */
  const measure = async (phase: string) => {
    for (const c of cases) await http(c.body); // warm-up: one pass over every case
    const all: number[] = [];
    const typical: number[] = [];
    const p95: number[] = [];
    const answers: string[] = [];
    log(`\n${phase}: POST /agent/v1/search over HTTP, ${REQUESTS} sequential requests per case (results returned):`);
    for (const c of cases) {
      const samples: number[] = [];
      let count = 0;
      for (let i = 0; i < REQUESTS; i++) {
        const r = await http(c.body);
        samples.push(r.ms);
        count = r.count;
        if (i === 0) answers.push(r.ids.join(","));
      }
      all.push(...samples);
      if (!c.name.includes("worst case")) typical.push(...samples);
      p95.push(summary(samples).p95);
      log(`  ${c.name.padEnd(32)} ${fmt(summary(samples))}  (${count} results)`);
    }
    log(`  all cases but the worst case:    ${fmt(summary(typical))}`);
    log(`  all cases:                       ${fmt(summary(all))}`);

    log(`${phase}: the provider's SQL alone (in-process, ${Math.min(REQUESTS, 50)} calls per case):`);
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
    return { p95, answers };
  };

  /** "same", or where two answers (ids joined by commas) first differ. */
  const sameOrWhere = (a: string, b: string) => {
    if (a === b) return "same";
    const [x, y] = [a.split(","), b.split(",")];
    const at = x.findIndex((id, i) => id !== y[i]);
    return `DIFFERENT from position ${at === -1 ? x.length : at} (${x.length} / ${y.length} results)`;
  };

  // First without the recent index (the baseline), then with it, as the worker keeps it at the default settings.
  const dropRecent = async () => {
    const names = await deps.db.$queryRaw<{ name: string }[]>`
      SELECT indexrelid::regclass::text AS name FROM pg_index
      WHERE indrelid = 'content_store'::regclass AND starts_with(indexrelid::regclass::text, ${RECENT_INDEX_PREFIX})`;
    for (const { name } of names) await deps.db.$executeRawUnsafe(`DROP INDEX IF EXISTS "${name}"`);
  };
  await dropRecent();
  await new Promise((r) => setTimeout(r, 31_000)); // the provider's memory of the recent index lapses
  const without = await measure("Without the recent index");
  let withIndex: Awaited<ReturnType<typeof measure>> | undefined;
  if (!NO_RECENT) {
    const settings = { minRows: deps.config.SEARCH_RECENT_INDEX_MIN_ROWS, targetRows: deps.config.SEARCH_RECENT_INDEX_ROWS };
    const outcome = await maintainRecentIndex({ pool: deps.pool, redis: deps.redis, redisPrefix: deps.config.REDIS_PREFIX }, settings);
    log(`\nrecent index: ${outcome.action}${outcome.reason ? ` (${outcome.reason})` : ""}, ${JSON.stringify(settings)}`);
    if (outcome.action === "built") {
      const size = await deps.db.$queryRawUnsafe<{ bytes: number; rows: number }[]>(
        `SELECT pg_relation_size('"${outcome.index!.name}"')::float8 AS bytes,
                (SELECT count(*) FROM content_store WHERE ${recentPredicate(outcome.index!.horizon)})::float8 AS rows`,
      );
      const { bytes, rows } = size[0]!;
      log(
        `  ${outcome.index!.name}: built in ${((outcome.buildMs ?? 0) / 1000).toFixed(1)} s, ${rows} rows from ` +
          `${outcome.index!.horizon.toISOString()}, ${(bytes / 1e6).toFixed(0)} MB (${(bytes / TOTAL).toFixed(1)} B a stored row)`,
      );
      await new Promise((r) => setTimeout(r, 31_000));
      withIndex = await measure("With the recent index");
      log("\np95 in ms, without / with the recent index (same answers?):");
      for (const [i, c] of cases.entries())
        log(
          `  ${c.name.padEnd(32)} ${without.p95[i]!.toFixed(1).padStart(7)} / ${withIndex.p95[i]!.toFixed(1).padStart(7)}` +
            `  ${sameOrWhere(without.answers[i]!, withIndex.answers[i]!)}`,
        );
      if (!KEEP_RECENT) await dropRecent();
    }
  }

  server.close();
  await closeDeps(deps);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
