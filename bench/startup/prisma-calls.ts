import { parseArgs } from "node:util";
import { dropDatabase, ensureDatabase, withDatabase } from "../../src/platform/database-admin.js";
import { createDb } from "../../src/platform/db.js";
import { MIGRATIONS_DIR, migrate } from "../../src/platform/migrate.js";

/**
 * What the generated client's query compiler costs a process: resident memory before and after its
 * first query (the compiler's WebAssembly module loads then), and CPU per Prisma call once the
 * plans of the calls' shapes are cached.
 *
 *   npx tsx bench/startup/prisma-calls.ts [--calls 10000] [--runs 3]
 *
 * Five shapes (create, find by id, filtered list, update, count), one round of 200 × 5 calls unrecorded,
 * then --runs rounds of --calls calls each, on a throwaway database (DATABASE_URL's server, migrated,
 * dropped at the end). It measures the build `npm run generate` produced: to compare builds, set
 * `compilerBuild` in prisma/schema.prisma, run `npm run generate`, run this again, and take turns.
 */
const { values } = parseArgs({ options: { calls: { type: "string", default: "10000" }, runs: { type: "string", default: "3" } } });
const calls = Number(values.calls);
const runs = Number(values.runs);

const serverUrl = process.env.DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";
const name = `res_bench_prisma_${process.pid}`;
const url = withDatabase(serverUrl, name);
await ensureDatabase(url);
await migrate(url, MIGRATIONS_DIR);

const mb = () => process.memoryUsage().rss / 1048576;
const cpuMs = () => {
  const used = process.cpuUsage();
  return (used.user + used.system) / 1000;
};

const db = createDb(url, 4);
try {
  const before = mb();
  const workspace = await db.workspace.create({ data: { name: "prisma-calls" } });
  const afterFirst = mb();
  const round = async (n: number) => {
    for (let i = 0; i < n; i++) {
      const entity = await db.entity.create({ data: { workspaceId: workspace.id, name: `entity ${i}`, keywords: ["a", "b"] } });
      await db.entity.findUnique({ where: { id: entity.id } });
      await db.entity.findMany({
        where: { workspaceId: workspace.id, name: { startsWith: "entity 1" } },
        take: 5,
        orderBy: { createdAt: "desc" },
      });
      await db.entity.update({ where: { id: entity.id }, data: { url: `https://example.com/${i}` } });
      await db.entity.count({ where: { workspaceId: workspace.id } });
    }
  };
  await round(200);
  console.log(`resident memory: ${before.toFixed(0)} MB before the first query, ${afterFirst.toFixed(0)} MB after it`);
  for (let run = 1; run <= runs; run++) {
    const cpu = cpuMs();
    const wall = Date.now();
    await round(calls / 5);
    console.log(
      `run ${run}: ${((cpuMs() - cpu) / calls).toFixed(3)} ms CPU and ${((Date.now() - wall) / calls).toFixed(3)} ms wall per call, ` +
        `${mb().toFixed(0)} MB resident`,
    );
  }
} finally {
  await db.$disconnect();
  await dropDatabase(serverUrl, name);
}
