/**
 * Themes judged the way maintainers group their own issues (one command):
 *
 *   npx tsx bench/quality/topics/index.ts [--split dev|test|both] [--show]
 *
 * For each repository of the split (areas.ts: repositories whose maintainers label issues by area),
 * every issue is one source (its markdown body, as stored); the engine's own stages read it
 * (enrichment's opinion units, then the analysis's themes for "What do users talk about most?", a
 * deep analysis's limits) and each reported theme's sources are judged against the area labels:
 * purity (share of a theme's labelled sources in its majority area, target ≥ 0.70) and coverage
 * (share of areas with ≥ 5 issues that are the majority of some theme, target ≥ 0.75), beside, in
 * the same run, a keyword baseline (the corpus's most distinctive words by TF-IDF, each a theme of the
 * sources using it) and random sets of the same sizes. Theme names are checked too: the share that
 * are code identifiers, and the share that are words every corpus uses (English Zipf ≥ 5, or in more
 * than 5% of other projects' issues), both with target 0. BERTopic itself is the peer, judged the same way
 * in the same run when BERTOPIC_PYTHON names a Python with bertopic/requirements.txt (bertopic.ts), beside
 * random sets of its topics' sizes ("random-bt": a random set's purity depends on its size).
 */
import { parseArgs } from "node:util";
import { COVERAGE_SHARE } from "../../../src/insights/analysis/engine.js";
import { findThemes } from "../../../src/insights/analysis/findings.js";
import { focusOf } from "../../../src/insights/analysis/focus.js";
import { questionIntent } from "../../../src/insights/analysis/question.js";
import { STOP } from "../../../src/insights/analysis/text.js";
import { phraseEmbedder } from "../../../src/insights/analysis/topics/embedder.js";
import { scoreUnits, type Unit } from "../../../src/insights/analysis/units.js";
import { analyseRows } from "../../../src/insights/enrichment/analyse.js";
import { AREA_SPLITS, type AreaIssue, type AreaScore, randomLike, readAreaIssues, scoreAreas, seeded } from "./areas.js";
import { BERTOPIC_SKIPPED, bertopicPython, bertopicThemes } from "./bertopic.js";
import { nameChecks } from "./names.js";

const { values } = parseArgs({ options: { split: { type: "string", default: "dev" }, show: { type: "boolean", default: false } } });
const splits = values.split === "both" ? (["dev", "test"] as const) : [values.split as "dev" | "test"];
const QUESTION = "What do users talk about most?";
const TARGETS = { purity: 0.7, coverage: 0.75 };

/** Entity names a tracked project would carry (the repository's name and owner). */
const namesOf = (repo: string) => repo.split("/").flatMap((p) => [p, p.replace(/[-_]/g, " ")]);

function themesOf(issues: AreaIssue[]) {
  const rows = issues.map((i) => ({ id: i.id, title: i.title, content: i.body.trim() === "" ? i.title : i.body }));
  const analysed = analyseRows(rows.map((r) => ({ title: r.title, content: r.content })));
  const units: Omit<Unit, "relevance">[] = analysed.flatMap((a, i) => a.spans.map((s) => ({ ...s, id: null, contentId: rows[i]!.id })));
  const withKind = rows.map((r, i) => ({ ...r, feedbackKind: analysed[i]!.kind.kind as string }));
  const intent = questionIntent(QUESTION, namesOf(issues[0]!.repo));
  const found = findThemes(
    scoreUnits(units, withKind, QUESTION),
    withKind,
    { intent, focus: focusOf(intent), entityNames: namesOf(issues[0]!.repo) },
    { insights: 6, coverageCap: 40, coverageMin: Math.max(1, Math.ceil(COVERAGE_SHARE * rows.length)) },
    phraseEmbedder(),
  );
  if (!found.answered) return [];
  return found.reported.map((t) => ({ name: t.label, polarity: t.polarity, sources: [...new Set(t.units.map((u) => u.contentId))] }));
}

/** The keyword baseline: the corpus's words with the highest document-frequency × IDF-in-corpus weight. */
function keywordThemes(issues: AreaIssue[], count: number) {
  const docs = issues.map((i) => new Set((`${i.body}`.toLowerCase().match(/\p{L}{3,}/gu) ?? []).filter((w) => !STOP.has(w))));
  const df = new Map<string, number>();
  for (const d of docs) for (const w of d) df.set(w, (df.get(w) ?? 0) + 1);
  const n = docs.length;
  const ranked = [...df]
    .filter(([, k]) => k >= 3 && k <= 0.5 * n)
    .map(([w, k]) => ({ w, score: k * Math.log(n / k) }))
    .sort((a, b) => b.score - a.score || a.w.localeCompare(b.w))
    .slice(0, count);
  return ranked.map(({ w }) => ({ name: w, sources: issues.filter((_, i) => docs[i]!.has(w)).map((i) => i.id) }));
}

/** Random sets of the same sizes as `sets`, scored: the mean of 20 seeded draws. */
function randomBaseline(sets: string[][], issues: AreaIssue[], areasOf: ReadonlyMap<string, readonly string[]>): AreaScore {
  const random = seeded(7);
  const draws = Array.from({ length: 20 }, () =>
    scoreAreas(
      randomLike(
        sets,
        issues.map((i) => i.id),
        random,
      ),
      areasOf,
    ),
  );
  return {
    judged: draws[0]?.judged ?? 0,
    areas: scoreAreas([], areasOf).areas,
    purity: draws.reduce((a, d) => a + d.purity, 0) / draws.length,
    coverage: draws.reduce((a, d) => a + d.coverage, 0) / draws.length,
  };
}

const python = bertopicPython();
if (!python) console.log(BERTOPIC_SKIPPED);

const fmt = (s: AreaScore) =>
  `purity ${s.purity.toFixed(3)}  coverage ${s.coverage.toFixed(3)}  (${s.judged} themes judged, ${s.areas} areas)`;

for (const split of splits) {
  console.log(`\n== ${split} split: ${AREA_SPLITS[split].join(", ")}`);
  const totals = {
    engine: [] as AreaScore[],
    keyword: [] as AreaScore[],
    random: [] as AreaScore[],
    bertopic: [] as AreaScore[],
    "random-bt": [] as AreaScore[],
  };
  const names = { code: 0, common: 0, total: 0 };
  const peerNames = { code: 0, common: 0, total: 0 };
  for (const repo of AREA_SPLITS[split]) {
    const issues = readAreaIssues(repo);
    const areasOf = new Map(issues.map((i) => [i.id, i.areas]));
    const t0 = performance.now();
    const themes = themesOf(issues);
    const ms = performance.now() - t0;
    const engine = scoreAreas(
      themes.map((t) => t.sources),
      areasOf,
    );
    const keyword = scoreAreas(
      keywordThemes(issues, themes.length).map((t) => t.sources),
      areasOf,
    );
    const randomScore = randomBaseline(
      themes.map((t) => t.sources),
      issues,
      areasOf,
    );
    totals.engine.push(engine);
    totals.keyword.push(keyword);
    totals.random.push(randomScore);
    const checked = nameChecks(themes.map((t) => t.name));
    names.code += checked.code.length;
    names.common += checked.common.length;
    names.total += themes.length;
    console.log(
      `\n${repo}: ${issues.length} issues, ${issues.filter((i) => i.areas.length > 0).length} with an area label; themes in ${ms.toFixed(0)} ms`,
    );
    console.log(`  engine   ${fmt(engine)}`);
    console.log(`  keyword  ${fmt(keyword)}`);
    console.log(`  random   ${fmt(randomScore)}`);
    console.log(
      `  names: ${checked.code.length} code identifiers ${JSON.stringify(checked.code)}, ${checked.common.length} common words ${JSON.stringify(checked.common)}`,
    );
    if (values.show) for (const t of themes) console.log(`    ${t.name} [${t.polarity}] ${t.sources.length}`);
    if (python) {
      const peer = bertopicThemes(python, issues);
      if ("error" in peer) {
        console.log(`  bertopic not scored: ${peer.error}`);
        continue;
      }
      const score = scoreAreas(
        peer.topics.map((t) => t.sources),
        areasOf,
      );
      const randomPeer = randomBaseline(
        peer.topics.map((t) => t.sources),
        issues,
        areasOf,
      );
      totals.bertopic.push(score);
      totals["random-bt"].push(randomPeer);
      const peerChecked = nameChecks(peer.topics.map((t) => t.name));
      peerNames.code += peerChecked.code.length;
      peerNames.common += peerChecked.common.length;
      peerNames.total += peer.topics.length;
      const clustered = peer.topics.reduce((a, t) => a + t.sources.length, 0);
      console.log(`  bertopic ${fmt(score)}; ${peer.topics.length} topics over ${clustered} issues, ${peer.how}`);
      console.log(`  random-bt ${fmt(randomPeer)} (random sets of bertopic's topic sizes)`);
      console.log(
        `  bertopic names: ${peerChecked.code.length} code identifiers ${JSON.stringify(peerChecked.code)}, ${peerChecked.common.length} common words ${JSON.stringify(peerChecked.common)}`,
      );
      if (values.show) for (const t of peer.topics) console.log(`    ${t.name} (default: ${t.defaultName}) ${t.sources.length}`);
    }
  }
  const mean = (xs: AreaScore[], k: "purity" | "coverage") => xs.reduce((a, s) => a + s[k], 0) / Math.max(1, xs.length);
  console.log(`\n${split} mean over repositories:`);
  for (const [who, xs] of Object.entries(totals)) {
    if (xs.length === 0) continue;
    const partial = xs.length < AREA_SPLITS[split].length ? ` (${xs.length} of ${AREA_SPLITS[split].length} repositories)` : "";
    console.log(`  ${who.padEnd(9)} purity ${mean(xs, "purity").toFixed(3)}  coverage ${mean(xs, "coverage").toFixed(3)}${partial}`);
  }
  const purity = mean(totals.engine, "purity");
  const coverage = mean(totals.engine, "coverage");
  console.log(`  target purity ≥ ${TARGETS.purity}: ${purity.toFixed(3)}  ${purity >= TARGETS.purity ? "PASS" : "FAIL"}`);
  console.log(`  target coverage ≥ ${TARGETS.coverage}: ${coverage.toFixed(3)}  ${coverage >= TARGETS.coverage ? "PASS" : "FAIL"}`);
  console.log(
    `  theme names that are code identifiers: ${names.code} of ${names.total} (target 0); common words: ${names.common} (target 0)`,
  );
  if (python)
    console.log(
      `  bertopic topic names that are code identifiers: ${peerNames.code} of ${peerNames.total}; common words: ${peerNames.common}`,
    );
}
