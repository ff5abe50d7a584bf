/**
 * The embedders side by side: quality on public data, speed and memory on this machine.
 *
 *   npx tsx bench/embed/index.ts [--no-http] [--no-retrieval]
 *
 * 1. Semantic similarity: Spearman's correlation of cosine with the gold scores on the STS Benchmark
 *    test split (1,379 pairs, bench/embed/data/SOURCE.md), for feature hashing (the former default),
 *    TF-IDF cosine (fitted on the split's own sentences), the static companion and the encoder.
 * 2. Retrieval: nDCG@10 on the retrieval set in bench/embed/data/retrieval/ (BEIR layout: corpus.jsonl,
 *    queries.jsonl, qrels.tsv), for hashing, BM25, the static companion and the encoder; skipped when absent.
 * 3. Speed on one core: the static companion's sentences a second; the encoder's sentences a second in
 *    batches of 32 (one intra-op thread, one run at a time), and one short text's latency in process;
 *    with `--no-http` left out, the p50/p95 of `POST /agent/v1/content/embed` of one short text through
 *    the real web application (a database of its own, `res_bench_embed`).
 * 4. Memory: the process's resident set before either model, after the static companion, after the
 *    encoder's first and largest batches.
 */
import { existsSync, readFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { performance } from "node:perf_hooks";
import { ENCODER_MODEL, encodeTexts } from "../../src/insights/embed/encoder.js";
import { HASHING_MODEL, hashingVector } from "../../src/insights/embed/hashing.js";
import { staticEmbedder } from "../../src/insights/embed/static.js";
import { bm25, dot, ndcgAt, percentile, sparseDot, spearman, tfidf, topK } from "./metrics.js";

const args = process.argv.slice(2);
const log = (line = "") => process.stdout.write(`${line}\n`);
const rssMb = () => process.memoryUsage().rss / 2 ** 20;
const DATA = new URL("./data/", import.meta.url);

/** The STS Benchmark CSV (sentence1, sentence2, score; fields quoted when they hold a comma). */
function readSts(): { a: string[]; b: string[]; gold: number[] } {
  const text = readFileSync(new URL("stsb-en-test.csv", DATA), "utf8");
  const a: string[] = [];
  const b: string[] = [];
  const gold: number[] = [];
  for (const line of text.split("\n")) {
    if (line.trim() === "") continue;
    const fields: string[] = [];
    let i = 0;
    while (i <= line.length) {
      if (line[i] === '"') {
        let value = "";
        i++;
        while (i < line.length) {
          if (line[i] === '"' && line[i + 1] === '"') {
            value += '"';
            i += 2;
          } else if (line[i] === '"') {
            i++;
            break;
          } else value += line[i++];
        }
        fields.push(value);
        i++;
      } else {
        const end = line.indexOf(",", i);
        const stop = end < 0 ? line.length : end;
        fields.push(line.slice(i, stop));
        i = stop + 1;
      }
    }
    a.push(fields[0]!);
    b.push(fields[1]!);
    gold.push(Number(fields[2]));
  }
  return { a, b, gold };
}

const cosineRows = (x: ArrayLike<number>[], y: ArrayLike<number>[]) => x.map((v, i) => dot(v, y[i]!));

async function similarity() {
  const { a, b, gold } = readSts();
  log(`STS Benchmark test: ${a.length} pairs, Spearman × 100 of cosine against the gold scores`);
  const vectorOf = tfidf([...a, ...b]);
  const rows: [string, number][] = [
    [
      `hashing (${HASHING_MODEL})`,
      spearman(
        cosineRows(
          a.map((t) => hashingVector(t)),
          b.map((t) => hashingVector(t)),
        ),
        gold,
      ),
    ],
    [
      "TF-IDF cosine",
      spearman(
        a.map((t, i) => sparseDot(vectorOf(t), vectorOf(b[i]!))),
        gold,
      ),
    ],
  ];
  const st = staticEmbedder();
  rows.push([`static companion (${st.model})`, spearman(cosineRows(st.embedSync(a), st.embedSync(b)), gold)]);
  rows.push([`encoder (${ENCODER_MODEL})`, spearman(cosineRows(await encodeTexts(a), await encodeTexts(b)), gold)]);
  for (const [name, rho] of rows) log(`  ${name.padEnd(44)} ${(rho * 100).toFixed(2)}`);
}

async function retrieval() {
  const dir = new URL("retrieval/", DATA);
  if (!existsSync(new URL("corpus.jsonl", dir))) {
    log("retrieval: no data in bench/embed/data/retrieval/, skipped");
    return;
  }
  const name = existsSync(new URL("NAME", dir)) ? readFileSync(new URL("NAME", dir), "utf8").trim() : "retrieval set";
  const jsonl = (file: string) =>
    readFileSync(new URL(file, dir), "utf8")
      .split("\n")
      .filter((l) => l.trim() !== "")
      .map((l) => JSON.parse(l) as { _id: string; title?: string; text: string });
  const corpus = jsonl("corpus.jsonl");
  const docIndex = new Map(corpus.map((d, i) => [d._id, i]));
  const docTexts = corpus.map((d) => (d.title ? `${d.title}. ${d.text}` : d.text));
  const qrels = new Map<string, Map<number, number>>();
  for (const line of readFileSync(new URL("qrels.tsv", dir), "utf8").split("\n").slice(1)) {
    const [q, d, g] = line.split("\t");
    if (!q || !d || !docIndex.has(d) || Number(g) <= 0) continue;
    if (!qrels.has(q)) qrels.set(q, new Map());
    qrels.get(q)!.set(docIndex.get(d)!, Number(g));
  }
  const queries = jsonl("queries.jsonl").filter((q) => qrels.has(q._id));
  log(`${name}: ${queries.length} queries over ${corpus.length} documents, nDCG@10 × 100`);
  const evaluate = (score: (qi: number) => ArrayLike<number>) =>
    queries.reduce((s, q, qi) => s + ndcgAt(10, topK(score(qi), 10), qrels.get(q._id)!), 0) / queries.length;
  const dense = (docs: ArrayLike<number>[], qs: ArrayLike<number>[]) => (qi: number) => docs.map((d) => dot(d, qs[qi]!));

  const rank = bm25(docTexts);
  const st = staticEmbedder();
  const started = performance.now();
  const encDocs = await encodeTexts(docTexts);
  const encSeconds = (performance.now() - started) / 1000;
  const rows: [string, number][] = [
    ["BM25", evaluate((qi) => rank(queries[qi]!.text))],
    [
      `hashing (${HASHING_MODEL})`,
      evaluate(
        dense(
          docTexts.map((t) => hashingVector(t)),
          queries.map((q) => hashingVector(q.text)),
        ),
      ),
    ],
    [`static companion (${st.model})`, evaluate(dense(st.embedSync(docTexts), st.embedSync(queries.map((q) => q.text))))],
    [`encoder (${ENCODER_MODEL})`, evaluate(dense(encDocs, await encodeTexts(queries.map((q) => q.text))))],
  ];
  for (const [label, v] of rows) log(`  ${label.padEnd(44)} ${(v * 100).toFixed(2)}`);
  log(`  (the encoder embedded the ${corpus.length} documents in ${encSeconds.toFixed(1)} s, passages cut to 256 word pieces)`);
}

async function speed() {
  const { a, b } = readSts();
  const sentences = [...a, ...b];
  const st = staticEmbedder();
  st.embedSync(sentences.slice(0, 500));
  let done = 0;
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  while (performance.now() - t0 < 2000) {
    st.embedSync(sentences);
    done += sentences.length;
  }
  log(`static companion: ${rates(done, t0, c0)} (one thread, STS sentences, mean ${meanChars(sentences)} chars)`);

  const batch = sentences.slice(0, 1024);
  await encodeTexts(batch.slice(0, 64), { threads: 1 });
  const t1 = performance.now();
  const c1 = process.cpuUsage();
  await encodeTexts(batch, { threads: 1, batchSize: 32 });
  log(`encoder: ${rates(batch.length, t1, c1)} in batches of 32 (one intra-op thread, one run at a time)`);

  const samples: number[] = [];
  for (let i = 0; i < 300; i++) {
    const t = performance.now();
    await encodeTexts([sentences[i]!], { threads: 1 });
    samples.push(performance.now() - t);
  }
  log(
    `encoder, one short text in process (load average ${loadavg()[0]!.toFixed(1)} on ${cpus().length} cores): p50 ${percentile(samples, 50).toFixed(2)} ms, p95 ${percentile(samples, 95).toFixed(2)} ms`,
  );
}

/**
 * Sentences per second of wall time, and per second of this process's CPU time: on a machine shared with
 * other work the second is what one core of its own would give.
 */
function rates(sentences: number, startedAt: number, cpuAt: NodeJS.CpuUsage): string {
  const wall = (performance.now() - startedAt) / 1000;
  const cpu = process.cpuUsage(cpuAt);
  const cpuSeconds = (cpu.user + cpu.system) / 1e6;
  const f = (x: number) => Math.round(x).toLocaleString("en");
  return `${f(sentences / wall)} sentences/s (${f(sentences / cpuSeconds)} per CPU-second)`;
}

const meanChars = (texts: string[]) => Math.round(texts.reduce((s, t) => s + t.length, 0) / texts.length);

async function http() {
  const { startBenchApp } = await import("../lib/app.js");
  const { ensureDatabase, withDatabase } = await import("../../src/platform/database-admin.js");
  const { migrate, MIGRATIONS_DIR } = await import("../../src/platform/migrate.js");
  const { closeDeps } = await import("../../src/platform/deps.js");
  const serverUrl = process.env.DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";
  const url = withDatabase(serverUrl, "res_bench_embed");
  await ensureDatabase(url);
  await migrate(url, MIGRATIONS_DIR);
  const app = await startBenchApp({ databaseUrl: url, secret: "bench-embed-secret-0123456789abcdef", redisPrefix: "bench-embed" });
  try {
    const auth = `Bearer ${await app.token("bench-embed-user")}`;
    const { a } = readSts();
    const post = async (text: string) => {
      const res = await fetch(`${app.base}/agent/v1/content/embed`, {
        method: "POST",
        headers: { authorization: auth, "content-type": "application/json" },
        body: JSON.stringify({ text }),
      });
      if (res.status !== 200) throw new Error(`embed answered ${res.status}`);
      return (await res.json()) as { model: string };
    };
    const first = await post(a[0]!);
    for (let i = 0; i < 20; i++) await post(a[i]!);
    const samples: number[] = [];
    for (let i = 0; i < 300; i++) {
      const t = performance.now();
      await post(a[i % a.length]!);
      samples.push(performance.now() - t);
    }
    log(
      `POST /agent/v1/content/embed (${first.model}), one short text over HTTP: p50 ${percentile(samples, 50).toFixed(2)} ms, p95 ${percentile(samples, 95).toFixed(2)} ms (n=300, sequential)`,
    );
  } finally {
    await new Promise((r) => app.server.close(r));
    await closeDeps(app.deps);
  }
}

async function main() {
  const rss0 = rssMb();
  const heap0 = process.memoryUsage().heapUsed / 2 ** 20;
  staticEmbedder().embedSync(["warm up"]);
  const rss1 = rssMb();
  const heap1 = process.memoryUsage().heapUsed / 2 ** 20;
  await encodeTexts(["warm up"]);
  const rss2 = rssMb();
  await encodeTexts(Array.from({ length: 32 }, () => "word ".repeat(300)));
  const rss3 = rssMb();
  log(
    `memory: resident ${rss0.toFixed(0)} MB before; static companion +${(rss1 - rss0).toFixed(0)} MB (heap +${(heap1 - heap0).toFixed(0)} MB); ` +
      `encoder +${(rss2 - rss1).toFixed(0)} MB loaded, +${(rss3 - rss1).toFixed(0)} MB after a batch of 32 × 256 tokens`,
  );
  log();
  await similarity();
  log();
  if (!args.includes("--no-retrieval")) {
    await retrieval();
    log();
  }
  await speed();
  if (!args.includes("--no-http")) await http();
  log(`(rss at the end ${rssMb().toFixed(0)} MB)`);
}

await main();
