/**
 * Recall latency with 10,000 pages for one user and 100,000 pages in total.
 *
 *   npx tsx bench/recall/index.ts [--reseed] [--requests 500]
 *
 * Seeds a database of its own (`res_bench_recall` on DATABASE_URL's server, reused when
 * already seeded), starts the real web application on a local port and measures
 * `GET /agent/v1/context/recall` over HTTP with a user bearer: warm sequential and
 * concurrent requests, a recall right after each save, the first (cold) recall of a
 * process, and the parts in isolation, including the SQL-only cosine this design avoids.
 */
import { cpus, loadavg } from "node:os";
import { performance } from "node:perf_hooks";
import pg from "pg";
import { keywordRanking } from "../../src/insights/context/repo.js";
import { keywordQuery } from "../../src/insights/context/service.js";
import { CommonTerms } from "../../src/insights/context/terms.js";
import { CachedMatrixRanker } from "../../src/insights/context/vectors.js";
import { ENCODER_MODEL, encoderEmbedder } from "../../src/insights/embed/encoder.js";
import { ensureDatabase, withDatabase } from "../../src/platform/database-admin.js";
import { closeDeps } from "../../src/platform/deps.js";
import { MIGRATIONS_DIR, migrate } from "../../src/platform/migrate.js";
import { startBenchApp } from "../lib/app.js";
import { generatePage, hashingPages, insertPages, mulberry32, Vocabulary } from "./corpus.js";

const args = process.argv.slice(2);
const RESEED = args.includes("--reseed");
const REQUESTS = Number(args[args.indexOf("--requests") + 1] ?? 0) || 500;
const TARGET_PAGES = 10_000;
const TOTAL_PAGES = 100_000;
const OTHER_USERS = 45; // 90,000 pages: 2,000 each
const SECRET = "bench-recall-secret-0123456789";
const TARGET_SUB = "bench-recall-target";

const serverUrl = process.env.DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";
const DB_URL = withDatabase(serverUrl, "res_bench_recall");

const log = (line: string) => process.stdout.write(`${line}\n`);
const ms = (x: number) => `${x.toFixed(1)} ms`;

function summary(samples: number[]) {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
  return { n: sorted.length, p50: at(50), p95: at(95), p99: at(99), max: sorted.at(-1)! };
}
const describe = (s: ReturnType<typeof summary>) => `n=${s.n}  p50 ${ms(s.p50)}  p95 ${ms(s.p95)}  p99 ${ms(s.p99)}  max ${ms(s.max)}`;

const encoder = encoderEmbedder();
/**
 * The measured user's pages get the encoder's vectors of their titles (a few word pieces each), not of title and
 * content as a save embeds them: 10,000 pages of 80–400 words take the encoder a quarter of an hour of a shared
 * core, their titles a minute. What recall costs does not depend on what the vectors say: the scan is over
 * 10,000 vectors of 384 values of the query's model either way.
 */
const encoderPages = {
  model: ENCODER_MODEL,
  embed: (texts: string[]) => encoder.embed(texts.map((t) => t.split("\n\n")[0]!)),
};

async function seed(pool: pg.Pool): Promise<string> {
  // Reused only when the measured user's pages carry the default embedder's vectors (a corpus seeded before the
  // encoder carries feature hashing's, which the recall route no longer compares with its queries).
  const { rows } = await pool.query<{ n: string; t: string | null; current: boolean }>(
    `SELECT count(*)::text AS n, (SELECT id::text FROM users WHERE sub = $1) AS t,
       NOT EXISTS (SELECT 1 FROM pages p JOIN users u ON u.id = p.user_id WHERE u.sub = $1 AND p.embedding_model <> $2) AS current
     FROM pages WHERE path LIKE 'notes/%'`,
    [TARGET_SUB, ENCODER_MODEL],
  );
  if (!RESEED && rows[0]?.n === String(TOTAL_PAGES) && rows[0].t && rows[0].current) {
    log(`corpus: reusing ${TOTAL_PAGES} pages already seeded`);
    return rows[0].t;
  }
  const started = performance.now();
  await pool.query("TRUNCATE pages, users CASCADE");
  const rand = mulberry32(20261121);
  const vocab = new Vocabulary(rand);
  const client = await pool.connect();
  try {
    const users: { sub: string; pages: number }[] = [
      { sub: TARGET_SUB, pages: TARGET_PAGES },
      ...Array.from({ length: OTHER_USERS }, (_, i) => ({
        sub: `bench-recall-other-${i}`,
        pages: (TOTAL_PAGES - TARGET_PAGES) / OTHER_USERS,
      })),
    ];
    let targetId = "";
    for (const [i, u] of users.entries()) {
      const inserted = await client.query<{ id: string }>(
        "INSERT INTO users (id, sub) VALUES (gen_random_uuid(), $1) RETURNING id::text AS id",
        [u.sub],
      );
      const userId = inserted.rows[0]!.id;
      if (i === 0) targetId = userId;
      const pages = Array.from({ length: u.pages }, () => generatePage(vocab, rand));
      // The measured user's pages with the encoder (see encoderPages); the other users' with feature hashing,
      // which is quick: only their number and size matter to the measured recall.
      await insertPages(client, userId, pages, "notes", i === 0 ? encoderPages : hashingPages);
      if (i % 5 === 0) log(`  seeded ${u.sub}: ${u.pages} pages (${((performance.now() - started) / 1000).toFixed(0)} s)`);
    }
    await client.query("VACUUM ANALYZE pages");
    log(`corpus: seeded ${TOTAL_PAGES} pages in ${((performance.now() - started) / 1000).toFixed(0)} s`);
    return targetId;
  } finally {
    client.release();
  }
}

/** Queries drawn from the target user's own pages: 1 word, 2–3 words of one page, a 6-word mix, a compound. */
async function makeQueries(pool: pg.Pool, userId: string, count: number): Promise<string[]> {
  const { rows } = await pool.query<{ title: string; content: string }>(
    "SELECT title, content FROM pages WHERE user_id = $1 ORDER BY id LIMIT 2000",
    [userId],
  );
  const rand = mulberry32(7);
  const queries: string[] = [];
  for (let i = 0; i < count; i++) {
    const page = rows[Math.floor(rand() * rows.length)]!;
    const words = `${page.title} ${page.content}`.toLowerCase().match(/[a-z]+/g) ?? ["nothing"];
    const at = Math.floor(rand() * Math.max(1, words.length - 6));
    const kind = i % 4;
    if (kind === 0) queries.push(words[at]!);
    else if (kind === 1) queries.push(words.slice(at, at + 2 + Math.floor(rand() * 2)).join(" "));
    else if (kind === 2) queries.push(words.slice(at, at + 6).join(" "));
    else queries.push(words.slice(at, at + 2).join("")); // compound: matches by vector only
  }
  return queries;
}

async function main() {
  await ensureDatabase(DB_URL);
  await migrate(DB_URL, MIGRATIONS_DIR);
  const pool = new pg.Pool({ connectionString: DB_URL, max: 4 });
  const targetId = await seed(pool);
  const counts = await pool.query<{ mine: string; total: string }>(
    "SELECT count(*) FILTER (WHERE user_id = $1)::text AS mine, count(*)::text AS total FROM pages",
    [targetId],
  );
  log(`pages: ${counts.rows[0]!.mine} for the measured user, ${counts.rows[0]!.total} in total`);

  const { deps, server, base, token: mint } = await startBenchApp({ databaseUrl: DB_URL, secret: SECRET, redisPrefix: "bench-recall" });
  const token = await mint(TARGET_SUB, "2h");
  const headers = { authorization: `Bearer ${token}` };

  const recall = async (query: string) => {
    const t0 = performance.now();
    const res = await fetch(`${base}/agent/v1/context/recall?${new URLSearchParams({ query, limit: "10" })}`, { headers });
    const body = (await res.json()) as { count: number };
    const elapsed = performance.now() - t0;
    if (res.status !== 200) throw new Error(`recall answered ${res.status}: ${JSON.stringify(body)}`);
    return { elapsed, count: body.count };
  };

  log(
    `machine: ${cpus().length} cores, load average ${loadavg()
      .map((x) => x.toFixed(1))
      .join(" ")} at start`,
  );
  const queries = await makeQueries(pool, targetId, REQUESTS);
  log(`queries: ${queries.length} (1 word, 2-3 words, 6 words, compounds), limit 10, e.g. ${JSON.stringify(queries.slice(0, 4))}`);

  // 1. The first recall of a fresh process: loads the user's 10,000 vectors.
  const cold = await recall(queries[0]!);
  log(`\nfirst recall of the process (cold vector cache): ${ms(cold.elapsed)}`);

  // 2. Warm, one request at a time.
  for (const q of queries.slice(0, 20)) await recall(q);
  const sequential: number[] = [];
  let empty = 0;
  for (const q of queries) {
    const r = await recall(q);
    sequential.push(r.elapsed);
    if (r.count === 0) empty++;
  }
  const seq = summary(sequential);
  log(`warm, sequential:        ${describe(seq)}  (${empty} of ${queries.length} answered no result)`);

  // 3. Warm, 8 requests in flight.
  const concurrent: number[] = [];
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (next < queries.length) {
        const q = queries[next++]!;
        concurrent.push((await recall(q)).elapsed);
      }
    }),
  );
  const wall = performance.now() - t0;
  log(`warm, 8 in flight:       ${describe(summary(concurrent))}  (${((queries.length / wall) * 1000).toFixed(0)} req/s)`);

  // 4. A recall right after each save (the cache re-reads only the changed rows).
  const afterSave: number[] = [];
  const rand = mulberry32(99);
  const vocab = new Vocabulary(mulberry32(20261121));
  for (let i = 0; i < 50; i++) {
    const page = generatePage(vocab, rand);
    const saved = await fetch(`${base}/agent/v1/context/save`, {
      method: "POST",
      headers: { ...headers, "content-type": "application/json" },
      body: JSON.stringify({ ...page, path: `bench/after-save/${i % 10}` }),
    });
    if (saved.status !== 200) throw new Error(`save answered ${saved.status}`);
    afterSave.push((await recall(queries[i]!)).elapsed);
  }
  log(`recall right after a save: ${describe(summary(afterSave))}`);

  // 5. The parts: the HTTP edge alone (an authenticated route with one small query), then in process.
  const edge: number[] = [];
  for (let i = 0; i < 200; i++) {
    const s = performance.now();
    const res = await fetch(`${base}/api/user/keys`, { headers });
    await res.arrayBuffer();
    edge.push(performance.now() - s);
  }
  log(`\nparts: HTTP + bearer check, GET /api/user/keys:  ${describe(summary(edge))}`);

  const db = deps.db;
  const keyword: number[] = [];
  const terms = new CommonTerms(db);
  for (const q of queries.slice(0, 200)) {
    const s = performance.now();
    await keywordRanking(db, targetId, await keywordQuery(terms, q), undefined, 50);
    keyword.push(performance.now() - s);
  }
  log(`parts: keyword query + ranking SQL (top 50):     ${describe(summary(keyword))}`);

  const queryVectors = new Map<string, number[]>();
  for (const q of queries.slice(0, 200)) queryVectors.set(q, (await encoder.embed([q]))[0]!);
  const vectorOf = (q: string) => queryVectors.get(q)!;
  const ranker = new CachedMatrixRanker(db, 1024 * 1024 * 1024);
  const loads: number[] = [];
  for (let i = 0; i < 3; i++) {
    ranker.clear();
    const s = performance.now();
    await ranker.rank(targetId, vectorOf(queries[i]!), { model: ENCODER_MODEL, limit: 50, minSimilarity: 0.2 });
    loads.push(performance.now() - s);
  }
  log(`parts: vector cache cold load (10,000 vectors): ${loads.map(ms).join(", ")}`);
  const vector: number[] = [];
  for (const q of queries.slice(0, 200)) {
    const s = performance.now();
    await ranker.rank(targetId, vectorOf(q), { model: ENCODER_MODEL, limit: 50, minSimilarity: 0.2 });
    vector.push(performance.now() - s);
  }
  log(`parts: vector ranking, warm (fingerprint + scan): ${describe(summary(vector))}`);

  const sqlCosine: number[] = [];
  for (const q of queries.slice(0, 3)) {
    const s = performance.now();
    await pool.query(
      `SELECT id, (SELECT sum(a * b) FROM unnest(embedding, $2::real[]) AS t(a, b)) AS dot
       FROM pages WHERE user_id = $1 AND embedding_model = $3 ORDER BY dot DESC LIMIT 50`,
      [targetId, `{${vectorOf(q).join(",")}}`, ENCODER_MODEL],
    );
    sqlCosine.push(performance.now() - s);
  }
  log(`parts: the alternative, cosine in SQL over real[]: ${sqlCosine.map(ms).join(", ")}`);

  log(
    `\nmachine: load average ${loadavg()
      .map((x) => x.toFixed(1))
      .join(" ")} at end`,
  );
  log(`RESULT recall p50 ${ms(seq.p50)}, p95 ${ms(seq.p95)} (target p95 < 100 ms): ${seq.p95 < 100 ? "met" : "NOT met"}`);

  server.close();
  await pool.end();
  await closeDeps(deps);
}

main().catch((err) => {
  process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
