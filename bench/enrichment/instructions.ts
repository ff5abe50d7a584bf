import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { readIssues, readReviews } from "../quality/feedback/data/convert.js";

/**
 * The opinion units' cost in machine instructions, which unlike seconds do not move with the machine's
 * other load: valgrind's callgrind counts the instructions of one process that analyses the first `--rows`
 * issues and as many app reviews of the labelled feedback sets twice (`opinionUnits` of the compiled build,
 * `dist/`), and of the same process analysing nothing (start-up: loading the engine and its models). The
 * difference is the analysis. V8 runs `--single-threaded`, so its compiler and collector count in the same
 * thread and two runs of the same build give the same figure to a few parts in a million.
 *
 *   npm run build && npx tsx bench/enrichment/instructions.ts [--rows 200] [--tree .]
 *
 * `--tree` names another checkout (a worktree of an earlier commit, built) to measure beside this one.
 * Needs valgrind; about two minutes per tree.
 */
const { values: args } = parseArgs({
  options: { rows: { type: "string", default: "200" }, tree: { type: "string", multiple: true, default: ["."] } },
});
const rows = Number(args.rows);
const work = mkdtempSync(join(tmpdir(), "res-instructions-"));
const textsFile = join(work, "texts.json");
writeFileSync(
  textsFile,
  JSON.stringify([
    ...readIssues()
      .slice(0, rows)
      .map((i) => i.body),
    ...readReviews()
      .slice(0, rows)
      .map((r) => r.text),
  ]),
);
const runner = join(work, "runner.mjs");
writeFileSync(
  runner,
  `import { readFileSync } from "node:fs";
const [tree, file, passes] = process.argv.slice(2);
const { opinionUnits } = await import(tree + "/dist/src/insights/enrichment/opinions.js");
const texts = JSON.parse(readFileSync(file, "utf8"));
let units = 0;
for (let p = 0; p < Number(passes); p++) for (const t of texts) units += opinionUnits(t).length;
console.log("units " + units);
`,
);

function instructions(tree: string, passes: number): { total: number; units: string } {
  const out = join(work, `callgrind.${passes}.out`);
  const run = spawnSync(
    "valgrind",
    ["--tool=callgrind", `--callgrind-out-file=${out}`, process.execPath, "--single-threaded", runner, tree, textsFile, String(passes)],
    { encoding: "utf8" },
  );
  const collected = /Collected : (\d+)/.exec(run.stderr)?.[1];
  if (run.status !== 0 || !collected) throw new Error(`callgrind failed for ${tree}:\n${run.stderr.slice(-2000)}`);
  return { total: Number(collected), units: /units (\d+)/.exec(run.stdout)?.[1] ?? "?" };
}

try {
  execFileSync("valgrind", ["--version"]);
  process.stdout.write(`${rows} issues + ${rows} app reviews, analysed twice; instructions (callgrind, node --single-threaded)\n`);
  for (const tree of (args.tree as string[]).map((t) => resolve(t))) {
    const startup = instructions(tree, 0);
    const full = instructions(tree, 2);
    const analysis = full.total - startup.total;
    process.stdout.write(
      `${tree}: ${(full.total / 1e6).toFixed(0)} M in all, start-up ${(startup.total / 1e6).toFixed(0)} M, ` +
        `analysis ${(analysis / 1e6).toFixed(0)} M = ${(analysis / (4 * rows) / 1e3).toFixed(0)} k per text (${full.units} units)\n`,
    );
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
