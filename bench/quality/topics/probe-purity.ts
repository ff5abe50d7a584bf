/**
 * Each topic the engine finds in one repository's issues, with its purity against the area labels:
 *   npx tsx bench/quality/topics/probe-purity.ts neovim/neovim   (N=40 shows more)
 */
import { discoverTopics } from "../../../src/insights/analysis/topics/discover.js";
import { phraseEmbedder } from "../../../src/insights/analysis/topics/embedder.js";
import { analyseRows } from "../../../src/insights/enrichment/analyse.js";
import { readAreaIssues, scoreAreas } from "./areas.js";

const repo = process.argv[2] ?? "neovim/neovim";
const issues = readAreaIssues(repo);
const rows = issues.map((i) => ({ id: i.id, title: i.title, content: i.body.trim() === "" ? i.title : i.body }));
const analysed = analyseRows(rows);
const units = analysed.flatMap((a, i) => a.spans.map((s) => ({ ...s, contentId: rows[i]!.id })));
const areasOf = new Map(issues.map((i) => [i.id, i.areas]));
const model = discoverTopics(
  units,
  rows.length,
  repo.split("/"),
  phraseEmbedder(),
  process.env.NOTITLES ? new Map() : new Map(rows.map((r) => [r.id, r.title])),
);
const all = model.topics.map((t) => [...t.sources]);
console.log("all topics", model.topics.length, scoreAreas(all, areasOf));
for (const t of model.topics.slice(0, Number(process.env.N ?? 30))) {
  const s = scoreAreas([[...t.sources]], areasOf);
  const lab = [...t.sources].filter((x) => (areasOf.get(x)?.length ?? 0) > 0).length;
  console.log(`${t.name} (${t.sources.size}, ${lab} labelled) purity ${s.purity.toFixed(2)} [${t.phrases.slice(0, 6).join(", ")}]`);
}
