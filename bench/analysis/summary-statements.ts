/**
 * The intelligence summary's statements one by one over the `--scale` entity of bench/analysis (run
 * `npx tsx bench/analysis/index.ts --scale 10000000` first, which seeds it):
 *
 *   npx tsx bench/analysis/summary-statements.ts [--scale 10000000]
 *
 * Prints each statement's time for windows of 30 and 365 days (the quotes of the ten commonest aspects'
 * complaints and praise), against the database `res_bench_analysis` on DATABASE_URL's server.
 */
import { performance } from "node:perf_hooks";
import { aspectCounts, latestCoverage, platformCounts, quoteCandidates, type Windows } from "../../src/insights/intelligence/sql.js";
import { loadConfig } from "../../src/platform/config.js";
import { withDatabase } from "../../src/platform/database-admin.js";
import { closeDeps, createDeps } from "../../src/platform/deps.js";

const args = process.argv.slice(2);
const SCALE = Number(args.includes("--scale") ? args[args.indexOf("--scale") + 1] : 10_000_000);
const serverUrl = process.env.DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";
const config = loadConfig({
  DATABASE_URL: withDatabase(serverUrl, "res_bench_analysis"),
  AUTH_JWT_SECRET: "bench-summary-statements-0123456789abcdef",
  LOG_LEVEL: "silent",
});
const deps = createDeps(config, "bench");
const db = deps.db;
const id = (await db.$queryRaw<{ id: string }[]>`SELECT id FROM entities WHERE name = ${`Acme Notes scaled ${SCALE}`}`)[0]?.id;
if (!id) throw new Error(`no entity 'Acme Notes scaled ${SCALE}': run bench/analysis/index.ts --scale ${SCALE} first`);
for (const days of [30, 365]) {
  const end = new Date();
  const w: Windows = {
    end,
    currentStart: new Date(end.getTime() - days * 86400000),
    previousStart: new Date(end.getTime() - 2 * days * 86400000),
  };
  const t = async <T>(name: string, f: () => Promise<T>) => {
    const s = performance.now();
    const r = await f();
    console.log(days, name, (performance.now() - s).toFixed(0), "ms");
    return r;
  };
  await t("platformCounts", () => platformCounts(db, id, w));
  const rows = await t("aspectCounts", () => aspectCounts(db, [id], w));
  await t("latestCoverage", () => latestCoverage(db, id));
  const aspects = [
    ...new Set(
      rows
        .filter((r) => r.level === 1 && r.current)
        .sort((a, b) => b.sources - a.sources)
        .map((r) => r.aspect),
    ),
  ].slice(0, 10);
  const targets = aspects.flatMap((aspect) => (["complaint", "praise"] as const).map((side) => ({ entityId: id, aspect, side })));
  await t(`quoteCandidates(${targets.length})`, () =>
    quoteCandidates(
      db,
      targets,
      w,
      12,
      new Map([[id, rows.filter((r) => r.level === 0 && r.current).reduce((n, r) => n + r.statements, 0)]]),
    ),
  );
}
await closeDeps(deps);
