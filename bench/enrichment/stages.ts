import { createHash } from "node:crypto";
import { writeFileSync } from "node:fs";
import { performance } from "node:perf_hooks";
import { parseArgs } from "node:util";
import { createBulkEmbedder } from "../../src/insights/embed/provider.js";
import { feedbackKind } from "../../src/insights/enrichment/feedback-kind/index.js";
import { opinionUnits } from "../../src/insights/enrichment/opinions.js";
import { embeddingText } from "../../src/insights/enrichment/service.js";
import { loadConfig } from "../../src/platform/config.js";
import { readIssues, readReviews } from "../quality/feedback/data/convert.js";

/**
 * Where enrichment spends its CPU, stage by stage, in this process (no database): the embedding
 * (the configured provider; the default is the local hashing embedder), the opinion units and the
 * feedback kind, over real issues and app reviews (bench/quality/feedback/data), each pass timed
 * apart; then a digest of every unit and kind the engine produced over the whole labelled set, so a
 * change made for speed can show it changed nothing else (the same digest before and after).
 *
 *   npx tsx bench/enrichment/stages.ts [--rows 2000] [--passes 3] [--dump units.jsonl]
 *
 * `--dump` writes each original's units and kind as a JSON line, so two digests that differ can be
 * compared original by original.
 *
 * The database side (reads, unit inserts, the row updates) is measured with it by
 * bench/quality/feedback/throughput.ts.
 */
const { values: args } = parseArgs({
  options: {
    rows: { type: "string", default: "2000" },
    passes: { type: "string", default: "3" },
    dump: { type: "string" },
  },
});
const count = Number(args.rows);
const issues = readIssues();
const reviews = readReviews();
const all = [
  ...issues.map((i) => ({ title: i.title, content: i.body.trim() === "" ? i.title : i.body })),
  ...reviews.map((r) => ({ title: "", content: r.text })),
];
// Half issues, half reviews (as the throughput bench takes them).
const rows = [...all.slice(0, Math.ceil(count / 2)), ...all.slice(issues.length, issues.length + Math.floor(count / 2))];
const config = loadConfig({
  ...process.env,
  DATABASE_URL: process.env.DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/unused",
  REDIS_URL: process.env.REDIS_URL ?? "redis://127.0.0.1:6379",
  AUTH_JWT_SECRET: process.env.AUTH_JWT_SECRET ?? "bench-only-secret-not-used-for-anything-000",
});
const embedder = createBulkEmbedder(config);
const mb = rows.reduce((sum, r) => sum + r.title.length + r.content.length, 0) / 1e6;
const log = (line: string) => process.stdout.write(`${line}\n`);

log(`${rows.length} rows (${mb.toFixed(2)} M characters), one core, ${embedder.model} embeddings`);
for (let pass = 1; pass <= Number(args.passes); pass++) {
  let t = performance.now();
  await embedder.embed(rows.map(embeddingText));
  const embed = performance.now() - t;
  t = performance.now();
  const spans = rows.map((r) => opinionUnits(r.content));
  const units = performance.now() - t;
  t = performance.now();
  for (const [i, r] of rows.entries()) feedbackKind(r.title, r.content, spans[i]!);
  const kind = performance.now() - t;
  const total = embed + units + kind;
  log(
    `  pass ${pass}: embeddings ${embed.toFixed(0)} ms, opinion units ${units.toFixed(0)} ms, feedback kind ${kind.toFixed(0)} ms` +
      ` = ${((rows.length * 1000) / total).toFixed(0)} rows/s${pass === 1 ? " (includes warm-up)" : ""}`,
  );
}
const digest = createHash("sha256");
const dump: string[] = [];
for (const r of all) {
  const units = opinionUnits(r.content);
  const kind = feedbackKind(r.title, r.content, units).kind;
  digest.update(JSON.stringify(units));
  digest.update(JSON.stringify(kind));
  if (args.dump) dump.push(JSON.stringify({ units, kind }));
}
if (args.dump) writeFileSync(args.dump, `${dump.join("\n")}\n`);
log(`output digest over all ${all.length} labelled originals (units and kinds): ${digest.digest("hex").slice(0, 16)}`);
