import { performance } from "node:perf_hooks";
import { aspectCounts, latestCoverage, platformCounts, quoteCandidates, type Windows } from "../../src/insights/intelligence/sql.js";
import { loadConfig } from "../../src/platform/config.js";
import { closeDeps, createDeps } from "../../src/platform/deps.js";

const config = loadConfig({
  DATABASE_URL: "postgresql://postgres@127.0.0.1:5432/res_bench_analysis",
  AUTH_JWT_SECRET: "x".repeat(40),
  LOG_LEVEL: "silent",
});
const deps = createDeps(config, "probe");
const db = deps.db;
const id = (await db.$queryRaw<{ id: string }[]>`SELECT id FROM entities WHERE name = 'Acme Notes scaled 10000000'`)[0]?.id;
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
  await t("platformCounts", () => platformCounts(db, id!, w));
  const rows = await t("aspectCounts", () => aspectCounts(db, [id!], w));
  await t("latestCoverage", () => latestCoverage(db, id!));
  const aspects = [
    ...new Set(
      rows
        .filter((r) => r.level === 1 && r.current)
        .sort((a, b) => b.sources - a.sources)
        .map((r) => r.aspect),
    ),
  ].slice(0, 10);
  const targets = aspects.flatMap((aspect) => (["complaint", "praise"] as const).map((side) => ({ entityId: id!, aspect, side })));
  await t(`quoteCandidates(${targets.length})`, () =>
    quoteCandidates(
      db,
      targets,
      w,
      12,
      new Map([[id!, rows.filter((r) => r.level === 0 && r.current).reduce((n, r) => n + r.statements, 0)]]),
    ),
  );
}
await closeDeps(deps);
