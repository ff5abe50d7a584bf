/**
 * Insight quality of the analysis engine on public labelled review sentences
 * (bench/quality/data: Laptop-ACOS and OATS hotel test splits; SOURCE.md).
 *
 *   npx tsx bench/quality/index.ts [--question "..."] [--polarity-only]   (npm run bench:quality)
 *
 * 1. Sentence polarity of the engine's opinion units beside two word-list baselines
 *    (VADER, AFINN) on the same sentences: accuracy, macro-F1, per-class F1.
 * 2. One deep analysis over the whole set through the real service (analysis.ts), its
 *    themes mapped back to the gold sentences they quote: purity, polarity agreement and
 *    coverage of the (category, polarity) groups holding ≥ 3% of the sentences.
 * Then each target with PASS or FAIL. Nothing here is tuned to the set; the same
 * figures are checked on held-out data.
 */
import { parseArgs } from "node:util";
import { type GoldSentence, type Polarity, readSentences } from "./data/convert.js";
import { afinnPolarity, enginePolarity, POLARITIES, type PolarityScores, scorePolarity, vaderPolarity } from "./polarity.js";
import { GROUP_MIN_SHARE, readThemes, scoreThemes } from "./themes.js";

const { values: args } = parseArgs({
  options: {
    question: { type: "string", default: "What do people praise and complain about?" },
    "polarity-only": { type: "boolean", default: false },
    /** Also print every quoted sentence of each theme with its gold category and polarity. */
    "show-evidence": { type: "boolean", default: false },
    "database-url": { type: "string", default: process.env.DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres" },
  },
});

const TARGETS = { accuracyMargin: 0.05, purity: 0.7, polarityAgreement: 0.8, coverage: 0.75 };

const log = (line = "") => process.stdout.write(`${line.trimEnd()}\n`);
const f3 = (x: number) => (Number.isFinite(x) ? x.toFixed(3) : "n/a");
const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
const verdict = (ok: boolean) => (ok ? "PASS" : "FAIL");
const count = <T extends string>(values: T[]) => values.reduce((m, v) => m.set(v, (m.get(v) ?? 0) + 1), new Map<T, number>());

function polaritySection(sentences: GoldSentence[]): { engine: PolarityScores; baseline: { name: string; scores: PolarityScores } } {
  const gold = sentences.map((s) => s.polarity);
  const systems = [
    { name: "engine (opinionUnits)", classify: enginePolarity },
    { name: "VADER (compound ±0.05)", classify: vaderPolarity },
    { name: "AFINN (comparative ≠ 0)", classify: afinnPolarity },
  ];
  const domains = [...new Set(sentences.map((s) => s.domain))];
  log("1. Sentence polarity: each system's label for every sentence against its gold polarity");
  log(`   ${"system".padEnd(26)}accuracy  macro-F1  F1 pos  F1 neg  F1 neu  ${domains.map((d) => `acc ${d}`.padEnd(13)).join("")}`);
  const results = systems.map((system) => {
    const predicted = sentences.map((s) => system.classify(s.text));
    const scores = scorePolarity(gold, predicted);
    const perDomain = domains.map((d) => {
      const idx = sentences.flatMap((s, i) => (s.domain === d ? [i] : []));
      return scorePolarity(
        idx.map((i) => gold[i]!),
        idx.map((i) => predicted[i]!),
      ).accuracy;
    });
    log(
      `   ${system.name.padEnd(26)}${f3(scores.accuracy).padEnd(10)}${f3(scores.macroF1).padEnd(10)}` +
        `${POLARITIES.map((p) => f3(scores.f1[p]).padEnd(8)).join("")}${perDomain.map((a) => f3(a).padEnd(13)).join("")}`,
    );
    return { name: system.name, scores };
  });
  const engine = results[0]!.scores;
  log(`   engine confusion, gold → predicted (${POLARITIES.join(" / ")}):`);
  for (const g of POLARITIES) log(`     ${g.padEnd(9)} ${POLARITIES.map((p) => String(engine.confusion[g][p]).padStart(5)).join("")}`);
  const baseline = results.slice(1).sort((a, b) => b.scores.accuracy - a.scores.accuracy)[0]!;
  return { engine, baseline };
}

async function analysisSection(sentences: GoldSentence[]) {
  const { runDeepAnalysis } = await import("./analysis.js");
  log();
  log("2. One deep analysis over the whole set through the service");
  log(`   question: ${JSON.stringify(args.question)}`);
  const run = await runDeepAnalysis(sentences, args.question as string, args["database-url"] as string);
  const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
  log(
    `   ingest of ${run.contentIdOf.size} sources ${s(run.timings.ingestMs)}, enrichment ${s(run.timings.enrichMs)}, ` +
      `analysis ${s(run.timings.analysisMs)}; status ${run.status}; events ${Object.entries(run.events)
        .map(([e, n]) => `${e} ${n}`)
        .join(", ")}`,
  );
  const goldByContentId = new Map<string, GoldSentence>();
  const byId = new Map(sentences.map((g) => [g.id, g]));
  for (const [sentenceId, contentId] of run.contentIdOf) goldByContentId.set(contentId, byId.get(sentenceId)!);
  const read = readThemes(run.data);
  const quality = scoreThemes(read, goldByContentId, sentences);
  const from = [...count(read.map((t) => t.polarityFrom))].map(([k, n]) => `${k} ${n}`).join(", ");
  log(`   themes: ${read.length} (${quality.themes.length} quoting gold sentences); theme polarity read from: ${from || "-"}`);
  const width = Math.min(60, Math.max(12, ...quality.themes.map((t) => t.title.length)));
  log(`   ${"theme title".padEnd(width)}  evidence  majority category (share)   gold polarity      theme polarity`);
  for (const t of quality.themes) {
    log(
      `   ${t.title.slice(0, width).padEnd(width)}  ${String(t.evidence).padStart(8)}  ${`${t.category} (${pct(t.categoryShare)})`.padEnd(27)} ` +
        `${t.goldPolarity.join("|").padEnd(18)} ${t.polarity ?? "-"}${t.agrees ? "" : "  ✗"}`,
    );
  }
  if (args["show-evidence"]) {
    for (const theme of read) {
      log(`   ${theme.title}`);
      for (const id of theme.contentIds) {
        const gold = goldByContentId.get(id);
        log(`     ${`${gold?.category ?? "?"}/${gold?.polarity ?? "?"}`.padEnd(22)} ${(gold?.text ?? "").slice(0, 110)}`);
      }
    }
  }
  log(`   theme purity: weighted by evidence ${f3(quality.purityWeighted)}, unweighted ${f3(quality.purityUnweighted)}`);
  log(
    `   polarity agreement: ${quality.themes.filter((t) => t.agrees).length} of ${quality.themes.length} themes = ${f3(quality.polarityAgreement)}`,
  );
  log(
    `   coverage of the ${quality.groups.length} (category, polarity) groups with ≥ ${pct(GROUP_MIN_SHARE)} of sentences: ` +
      `${quality.groups.filter((g) => g.covered).length} covered = ${f3(quality.coverage)}`,
  );
  for (const g of quality.groups) {
    log(
      `     ${`${g.category} / ${g.polarity}`.padEnd(28)} ${String(g.sentences).padStart(4)} (${pct(g.share)})  ${g.covered ? "covered" : "-"}`,
    );
  }
  return quality;
}

async function main() {
  const sentences = readSentences();
  const polarity = count(sentences.map((s) => s.polarity));
  const domains = count(sentences.map((s) => s.domain));
  log(
    `data: ${sentences.length} sentences (${[...domains].map(([d, n]) => `${d} ${n}`).join(", ")}); ` +
      `gold polarity ${(["positive", "negative", "neutral"] as Polarity[]).map((p) => `${p} ${polarity.get(p) ?? 0}`).join(", ")}; ` +
      `${new Set(sentences.map((s) => s.category)).size} categories`,
  );
  log();
  const { engine, baseline } = polaritySection(sentences);
  const quality = args["polarity-only"] ? null : await analysisSection(sentences);

  log();
  log("Targets");
  const needed = baseline.scores.accuracy + TARGETS.accuracyMargin;
  log(
    `   sentence polarity accuracy ≥ better baseline (${baseline.name}, ${f3(baseline.scores.accuracy)}) + ${TARGETS.accuracyMargin} = ${f3(needed)}: ` +
      `${f3(engine.accuracy)}  ${verdict(engine.accuracy >= needed)}`,
  );
  if (quality) {
    log(
      `   theme purity (weighted) ≥ ${TARGETS.purity}: ${f3(quality.purityWeighted)}  ${verdict(quality.purityWeighted >= TARGETS.purity)}`,
    );
    log(
      `   theme polarity agreement ≥ ${TARGETS.polarityAgreement}: ${f3(quality.polarityAgreement)}  ${verdict(quality.polarityAgreement >= TARGETS.polarityAgreement)}`,
    );
    log(`   group coverage ≥ ${TARGETS.coverage}: ${f3(quality.coverage)}  ${verdict(quality.coverage >= TARGETS.coverage)}`);
  } else {
    log("   theme targets: not measured (--polarity-only)");
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
