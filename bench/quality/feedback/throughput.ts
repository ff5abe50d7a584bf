/**
 * Enrichment throughput on real feedback, before and after a change, in one run: the worker's
 * enrichment (`enrichContent`, what the `enrichment.content.v1` processor calls: embeddings, opinion
 * units, the feedback kind, one transaction per chunk of rows) over the labelled issues and app
 * reviews of bench/quality/feedback/data, stored as originals in a fresh database of each tree's
 * own migrations.
 *
 *   npx tsx bench/quality/feedback/throughput.ts [--ref 529a033] [--rows 3000] [--repeat 2]
 *
 * `--ref` names the commit to compare with: it is checked out as a git worktree under the system's
 * temporary folder (node_modules linked from this tree, its Prisma client generated), and its own
 * `src/insights/enrichment/service.ts` runs against its own schema. Prints rows per second and units per row
 * for each tree, best of `--repeat` passes.
 */
import { execFileSync } from "node:child_process";
import { randomBytes, randomUUID } from "node:crypto";
import { existsSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { parseArgs } from "node:util";
import pg from "pg";
import { feedbackTexts } from "./data/convert.js";

const { values: args } = parseArgs({
  options: {
    ref: { type: "string" },
    rows: { type: "string", default: "3000" },
    repeat: { type: "string", default: "2" },
    "database-url": { type: "string", default: process.env.DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres" },
  },
});
const ROOT = path.resolve(import.meta.dirname, "../../..");
const log = (line = "") => process.stdout.write(`${line}\n`);

interface Tree {
  name: string;
  dir: string;
}

function worktree(ref: string): Tree {
  const dir = mkdtempSync(path.join(tmpdir(), "res-throughput-"));
  execFileSync("git", ["-C", ROOT, "worktree", "add", "--detach", dir, ref], { stdio: "ignore" });
  symlinkSync(path.join(ROOT, "node_modules"), path.join(dir, "node_modules"));
  execFileSync("node", ["scripts/prisma-generate.mjs"], { cwd: dir, stdio: "ignore" });
  return { name: `${ref} (before)`, dir };
}

/** The corpus: issues (title, markdown body) and reviews, interleaved, `count` rows. */
const corpus = (count: number) => feedbackTexts().slice(0, count);

async function measure(tree: Tree, rows: ReturnType<typeof corpus>, serverUrl: string, repeat: number) {
  const { migrate, MIGRATIONS_DIR } = await import(path.join(tree.dir, "src/platform/migrate.ts"));
  const admin = await import(path.join(tree.dir, "src/platform/database-admin.ts"));
  const { loadConfig } = await import(path.join(tree.dir, "src/platform/config.ts"));
  const dbModule = await import(path.join(tree.dir, "src/platform/db.ts"));
  // Trees before the areas (src/insights/…) kept the domains directly under src/.
  const insights = existsSync(path.join(tree.dir, "src/insights")) ? "src/insights" : "src";
  // The embedder enrichment runs with: the bulk one where the tree has it (the static companion), else the only one.
  const providers = await import(path.join(tree.dir, insights, "embed/provider.ts"));
  const createEmbedder = providers.createBulkEmbedder ?? providers.createEmbedder;
  const { enrichContent } = await import(path.join(tree.dir, insights, "enrichment/service.ts"));
  const name = `res_bench_throughput_${randomBytes(4).toString("hex")}`;
  await admin.onServer(serverUrl, (c: pg.Client) => c.query(`CREATE DATABASE "${name}"`));
  const url = admin.withDatabase(serverUrl, name);
  try {
    await migrate(url, MIGRATIONS_DIR);
    const client = new pg.Client({ connectionString: url });
    client.on("error", () => {});
    await client.connect();
    const workspace = randomUUID();
    const entity = randomUUID();
    await client.query(`INSERT INTO workspaces (id, name) VALUES ($1, 'bench')`, [workspace]);
    await client.query(`INSERT INTO entities (id, workspace_id, name) VALUES ($1, $2, 'Tracked')`, [entity, workspace]);
    const config = loadConfig({
      ...process.env,
      DATABASE_URL: url,
      NODE_ENV: "production",
      LOG_LEVEL: "silent",
      AUTH_JWT_SECRET: "bench-throughput-secret-0123456789",
    });
    const { db, pool } = dbModule.createDatabase ? dbModule.createDatabase(url, 4) : { db: dbModule.createDb(url, 4), pool: null };
    // Trees whose enrichment writes through the driver's pool (they have poolTransaction) take the pool, earlier ones the client.
    const store = dbModule.poolTransaction ? pool : db;
    const embedder = createEmbedder(config);
    let best = { seconds: Number.POSITIVE_INFINITY, units: 0 };
    for (let pass = 0; pass < repeat; pass++) {
      const ids: string[] = [];
      for (let i = 0; i < rows.length; i += 500) {
        const batch = rows.slice(i, i + 500);
        const values = batch.map((_, k) => `($${k * 6 + 1}, $${k * 6 + 2}, $${k * 6 + 3}, $${k * 6 + 4}, $${k * 6 + 5}, $${k * 6 + 6})`);
        const params = batch.flatMap((r) => {
          const id = randomUUID();
          ids.push(id);
          return [id, entity, workspace, r.platform, r.title, r.content];
        });
        await client.query(
          `INSERT INTO content_store (id, entity_id, workspace_id, platform, title, content, url, author, content_hash, dedup_key)
           SELECT v.id::uuid, v.e::uuid, v.w::uuid, v.p, v.t, v.c, 'https://example.com/' || v.id, 'someone', md5(v.c), v.id
           FROM (VALUES ${values.join(",")}) AS v(id, e, w, p, t, c)`,
          params,
        );
      }
      const t0 = performance.now();
      // The processor's batch size: the ingest service queues enrichment per ingest batch.
      let units = 0;
      for (let i = 0; i < ids.length; i += 500) units += (await enrichContent(store, embedder, ids.slice(i, i + 500))).unitsInserted;
      const seconds = (performance.now() - t0) / 1000;
      if (seconds < best.seconds) best = { seconds, units };
    }
    await client.end();
    await db.$disconnect();
    log(
      `   ${tree.name.padEnd(24)} ${String(rows.length).padStart(6)} rows in ${best.seconds.toFixed(2)} s = ${(rows.length / best.seconds).toFixed(0)} rows/s; ` +
        `${(best.units / rows.length).toFixed(1)} units a row`,
    );
  } catch (err) {
    log(`   ${tree.name}: ${(err as Error).message}`);
    throw err;
  } finally {
    await admin.dropDatabase(serverUrl, name);
  }
}

async function main() {
  const rows = corpus(Number(args.rows));
  const repeat = Number(args.repeat);
  log(`Enrichment throughput over ${rows.length} feedback rows (issues and reviews), best of ${repeat}`);
  const trees: Tree[] = [];
  if (args.ref) trees.push(worktree(args.ref));
  trees.push({ name: "this tree (after)", dir: ROOT });
  try {
    for (const tree of trees) await measure(tree, rows, args["database-url"] as string, repeat);
  } finally {
    for (const tree of trees) {
      if (tree.dir === ROOT || !existsSync(tree.dir)) continue;
      execFileSync("git", ["-C", ROOT, "worktree", "remove", "--force", tree.dir], { stdio: "ignore" });
      rmSync(tree.dir, { recursive: true, force: true });
    }
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
