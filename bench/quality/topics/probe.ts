/**
 * Development probe (not a bench): the themes the engine's pure stages find on one repository's
 * labelled issues, with each theme's majority area. `npx tsx bench/quality/topics/probe.ts neovim/neovim`
 */
import { readFileSync } from "node:fs";
import { findThemes } from "../../../src/insights/analysis/findings.js";
import { focusOf } from "../../../src/insights/analysis/focus.js";
import { questionIntent } from "../../../src/insights/analysis/question.js";
import { phraseEmbedder } from "../../../src/insights/analysis/topics/embedder.js";
import { scoreUnits, type Unit } from "../../../src/insights/analysis/units.js";
import { analyseRows } from "../../../src/insights/enrichment/analyse.js";

const repo = process.argv[2] ?? "neovim/neovim";
const question = process.argv[3] ?? "What do users talk about most?";
const file = `bench/quality/feedback/data/raw/issues/${repo.replace("/", "__")}.jsonl`;
const issues = readFileSync(file, "utf8")
  .split("\n")
  .filter(Boolean)
  .map((l) => JSON.parse(l) as { number: number; title: string; body: string | null; labels: string[] });

const rows = issues.map((i) => ({ id: String(i.number), content: (i.body ?? "").trim() || i.title, title: i.title, feedbackKind: null }));
const analysed = analyseRows(rows.map((r) => ({ title: r.title, content: r.content })));
const units: Omit<Unit, "relevance">[] = analysed.flatMap((a, i) => a.spans.map((s) => ({ ...s, id: null, contentId: rows[i]!.id })));
const rowsWithKind = rows.map((r, i) => ({ ...r, feedbackKind: analysed[i]!.kind.kind as string }));
const scored = scoreUnits(units, rowsWithKind, question);
const intent = questionIntent(question, ["Neovim"]);
const focus = focusOf(intent);
const found = findThemes(
  scored,
  rowsWithKind,
  { intent, focus, entityNames: ["Neovim"] },
  { insights: 6, coverageCap: 40, coverageMin: Math.ceil(0.03 * rows.length) },
  phraseEmbedder(),
);
const labels = new Map(issues.map((i) => [String(i.number), i.labels]));
if (!found.answered) {
  console.log("not answered", found.noun);
  process.exit(0);
}
for (const t of found.reported) {
  const srcs = [...new Set(t.units.map((u) => u.contentId))];
  const counts = new Map<string, number>();
  for (const s of srcs) for (const l of labels.get(s) ?? []) counts.set(l, (counts.get(l) ?? 0) + 1);
  const top = [...counts].sort((a, b) => b[1] - a[1]).slice(0, 3);
  console.log(`${t.label} [${t.polarity}] ${srcs.length}  ${top.map(([l, n]) => `${l}:${n}`).join(" ")}`);
}

if (process.env.TERMS) {
  const df = new Map<string, Set<string>>();
  for (const u of units) for (const t of u.terms) df.set(t, (df.get(t) ?? new Set()).add(u.contentId));
  console.log(
    [...df]
      .sort((a, b) => b[1].size - a[1].size)
      .slice(0, 150)
      .map(([t, s]) => `${t}:${s.size}`)
      .join("  "),
  );
  const kinds = new Map<string, number>();
  for (const u of units) kinds.set(u.kind, (kinds.get(u.kind) ?? 0) + 1);
  console.log(units.length, [...kinds]);
}
