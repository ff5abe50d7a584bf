import { readFileSync } from "node:fs";
import { discoverTopics } from "../../../src/insights/analysis/topics/discover.js";
import { hashingEmbedder } from "../../../src/insights/embed/hashing.js";
import { analyseRows } from "../../../src/insights/enrichment/analyse.js";

const repo = process.argv[2] ?? "neovim/neovim";
const names = (process.argv[3] ?? "").split(",").filter(Boolean);
const file = `bench/quality/feedback/data/raw/issues/${repo.replace("/", "__")}.jsonl`;
const issues = readFileSync(file, "utf8")
  .split("\n")
  .filter(Boolean)
  .map((l) => JSON.parse(l) as { number: number; title: string; body: string | null; labels: string[] });
const rows = issues.map((i) => ({ id: String(i.number), content: (i.body ?? "").trim() || i.title, title: i.title }));
const analysed = analyseRows(rows.map((r) => ({ title: r.title, content: r.content })));
const units = analysed.flatMap((a, i) => a.spans.map((s) => ({ ...s, contentId: rows[i]!.id })));
const hashing = hashingEmbedder();
let embedSync: (t: string[]) => ArrayLike<number>[];
try {
  const mod = await import("../../../src/insights/embed/static.js" as string);
  const e = mod.staticEmbedder();
  embedSync = (t) => e.embedSync(t);
  console.log("static embedder");
} catch {
  const { hashingVector } = await import("../../../src/insights/embed/hashing.js" as string).catch(() => ({}));
  embedSync = (t) => t.map((x) => (hashingVector ? hashingVector(x) : []));
}
const t0 = performance.now();
const model = discoverTopics(units, rows.length, names, embedSync);
console.log(`topics ${model.topics.length} in ${(performance.now() - t0).toFixed(0)} ms`);
const labels = new Map(issues.map((i) => [String(i.number), i.labels]));
for (const t of model.topics.slice(0, 60)) {
  const counts = new Map<string, number>();
  for (const s of t.sources) for (const l of labels.get(s) ?? []) counts.set(l, (counts.get(l) ?? 0) + 1);
  const top = [...counts].sort((a, b) => b[1] - a[1]).slice(0, 3);
  console.log(`${t.name} (${t.sources.size}) [${t.phrases.slice(0, 8).join(", ")}]  ${top.map(([l, n]) => `${l}:${n}`).join(" ")}`);
}
void hashing;
