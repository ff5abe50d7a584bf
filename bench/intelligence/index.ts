/**
 * Intelligence summary latency with 100,000 stored originals of one entity.
 *
 *   npx tsx bench/intelligence/index.ts [--reseed] [--requests 30]
 *
 * Seeds a database of its own (`res_bench_intelligence` on DATABASE_URL's server, reused when
 * already seeded): one company with 100,000 enriched originals (a fifth of them comments) over a
 * year, two competitors with 10,000 each, opinion units as the enrichment writes them, and
 * coverage records. Starts the real web application on a local port and measures
 * `GET /agent/v1/intelligence/summary` over HTTP with a user bearer, for windows of 30, 90 and
 * 365 days (365: every original of the entity is in the two windows), then each statement alone.
 */
import { cpus, loadavg } from "node:os";
import { performance } from "node:perf_hooks";
import pg from "pg";
import { aspectCounts, latestCoverage, platformCounts, quoteCandidates, type Windows } from "../../src/insights/intelligence/sql.js";
import { ensureDatabase, withDatabase } from "../../src/platform/database-admin.js";
import { closeDeps } from "../../src/platform/deps.js";
import { MIGRATIONS_DIR, migrate } from "../../src/platform/migrate.js";
import { startBenchApp } from "../lib/app.js";
import { generateRows, insertRows, type Side } from "./corpus.js";

const args = process.argv.slice(2);
const RESEED = args.includes("--reseed");
const REQUESTS = Number(args[args.indexOf("--requests") + 1] ?? 0) || 30;
const ORIGINALS = 100_000;
const COMPETITOR_ORIGINALS = 10_000;
const SECRET = "bench-intelligence-secret-0123456789";
const SUB = "bench-intelligence-user";
const TARGET_MS = 500;

const serverUrl = process.env.DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";
const DB_URL = withDatabase(serverUrl, "res_bench_intelligence");

const log = (line: string) => process.stdout.write(`${line}\n`);
const ms = (x: number) => `${x.toFixed(1)} ms`;

function summary(samples: number[]) {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number;
  return { n: sorted.length, p50: at(50), p95: at(95), max: sorted.at(-1) as number };
}
const describe = (s: ReturnType<typeof summary>) => `n=${s.n}  p50 ${ms(s.p50)}  p95 ${ms(s.p95)}  max ${ms(s.max)}`;

async function seed(pool: pg.Pool): Promise<string> {
  const existing = await pool.query<{ id: string; n: string }>(
    `SELECT e.id::text, (SELECT count(*) FROM content_store c WHERE c.entity_id = e.id)::text AS n
     FROM entities e WHERE e.name = 'Acme' AND e.kind = 'company' LIMIT 1`,
  );
  const found = existing.rows[0];
  if (!RESEED && found && Number(found.n) === ORIGINALS) {
    log(`corpus: reusing ${ORIGINALS} originals already seeded`);
    return found.id;
  }
  const started = performance.now();
  await pool.query("TRUNCATE users, workspaces, content_store, opinion_units, coverage_records CASCADE");
  const client = await pool.connect();
  try {
    const user = await client.query<{ id: string }>("INSERT INTO users (id, sub) VALUES (gen_random_uuid(), $1) RETURNING id::text", [SUB]);
    const ws = await client.query<{ id: string }>(
      "INSERT INTO workspaces (id, name) VALUES (gen_random_uuid(), 'Bench') RETURNING id::text",
    );
    const userId = user.rows[0]?.id as string;
    const workspaceId = ws.rows[0]?.id as string;
    await client.query("INSERT INTO workspace_members (workspace_id, user_id, role) VALUES ($1, $2, 'owner')", [workspaceId, userId]);
    const entity = async (name: string, kind: string, parent: string | null) =>
      (
        await client.query<{ id: string }>(
          `INSERT INTO entities (id, workspace_id, parent_entity_id, kind, name, platforms, updated_at)
           VALUES (gen_random_uuid(), $1, $2, $3, $4, ARRAY['reddit','hackernews','github','web','twitter'], now()) RETURNING id::text`,
          [workspaceId, parent, kind, name],
        )
      ).rows[0]?.id as string;
    const acme = await entity("Acme", "company", null);
    const competitors = [await entity("Globex", "competitor", acme), await entity("Initech", "competitor", acme)];

    // Acme's pricing and stability lean to complaints and its sync to praise; Globex's pricing leans to
    // praise and Initech's sync to complaints: two competitor gaps, one each way.
    const rows = generateRows(20261122, ORIGINALS, 365, "acme", { pricing: "complaint", stability: "complaint", sync: "praise" });
    for (let i = 0; i < rows.length; i += 10_000) {
      await insertRows(client, { id: acme, workspaceId }, rows.slice(i, i + 10_000));
      log(`  seeded ${Math.min(i + 10_000, rows.length)} originals of Acme (${((performance.now() - started) / 1000).toFixed(0)} s)`);
    }
    for (const [i, id] of competitors.entries()) {
      const tilt: Record<string, Side> = i === 0 ? { pricing: "praise" } : { sync: "complaint" };
      await insertRows(client, { id, workspaceId }, generateRows(7 + i, COMPETITOR_ORIGINALS, 365, `competitor${i}`, tilt));
    }
    for (const [collector, state] of [
      ["reddit", "exhaustive"],
      ["hackernews", "bounded"],
      ["github", "sampled"],
    ]) {
      const record = await client.query<{ id: string }>(
        `INSERT INTO coverage_records (id, entity_id, run_id, collector, collection_scope, coverage_state, query, updated_at)
         VALUES (gen_random_uuid(), $1, 'bench-run', $2, 'collection_job:brief:last_90_days', $3, 'acme', now()) RETURNING id::text`,
        [acme, collector, state],
      );
      await client.query(
        `INSERT INTO coverage_targets (id, coverage_record_id, position, target, target_type, status, items_found, items_stored, reached_end)
         VALUES (gen_random_uuid(), $1, 0, 'acme', 'search_query', $2, 500, 480, $3)`,
        [record.rows[0]?.id, state, state === "exhaustive"],
      );
    }
    await client.query("VACUUM ANALYZE content_store");
    await client.query("VACUUM ANALYZE opinion_units");
    log(`corpus: seeded ${ORIGINALS + 2 * COMPETITOR_ORIGINALS} originals in ${((performance.now() - started) / 1000).toFixed(0)} s`);
    return acme;
  } finally {
    client.release();
  }
}

async function main() {
  await ensureDatabase(DB_URL);
  await migrate(DB_URL, MIGRATIONS_DIR);
  const pool = new pg.Pool({ connectionString: DB_URL, max: 4 });
  const entityId = await seed(pool);
  const sizes = await pool.query<{ originals: string; units: string }>(
    `SELECT (SELECT count(*) FROM content_store WHERE entity_id = $1)::text AS originals,
            (SELECT count(*) FROM opinion_units WHERE entity_id = $1)::text AS units`,
    [entityId],
  );
  log(
    `entity: ${sizes.rows[0]?.originals} originals, ${sizes.rows[0]?.units} opinion units; two competitors with ${COMPETITOR_ORIGINALS} each`,
  );
  log(
    `machine: ${cpus().length} cores, load average ${loadavg()
      .map((x) => x.toFixed(1))
      .join(" ")} at start`,
  );

  const app = await startBenchApp({ databaseUrl: DB_URL, secret: SECRET, redisPrefix: "bench-intelligence" });
  const headers = { authorization: `Bearer ${await app.token(SUB, "2h")}` };
  const call = async (windowDays: number) => {
    const t0 = performance.now();
    const res = await fetch(`${app.base}/agent/v1/intelligence/summary?entity_id=${entityId}&window_days=${windowDays}`, { headers });
    const text = await res.text();
    const elapsed = performance.now() - t0;
    if (res.status !== 200) throw new Error(`summary answered ${res.status}: ${text.slice(0, 300)}`);
    return { elapsed, body: JSON.parse(text) as Record<string, unknown>, bytes: text.length };
  };

  const cold = await call(30);
  log(`\nfirst request of the process: ${ms(cold.elapsed)}`);
  const results: string[] = [];
  for (const windowDays of [30, 90, 365]) {
    for (let i = 0; i < 3; i++) await call(windowDays);
    const samples: number[] = [];
    let last: Awaited<ReturnType<typeof call>> | undefined;
    for (let i = 0; i < REQUESTS; i++) {
      last = await call(windowDays);
      samples.push(last.elapsed);
    }
    const s = summary(samples);
    const totals = (last?.body.totals ?? {}) as Record<string, { sources: number; comments: number; opinion_units: number }>;
    const inWindows = ["current", "previous"].reduce((n, k) => n + (totals[k]?.sources ?? 0) + (totals[k]?.comments ?? 0), 0);
    const units = ["current", "previous"].reduce((n, k) => n + (totals[k]?.opinion_units ?? 0), 0);
    const line = `window ${String(windowDays).padStart(3)} days: ${describe(s)}  (${inWindows} originals and ${units} units in the two windows, ${
      ((last?.body.themes as unknown[] | undefined) ?? []).length
    } themes, ${((last?.body.competitor_gaps as unknown[] | undefined) ?? []).length} gaps, ${last?.bytes} bytes)  ${s.p95 <= TARGET_MS ? "within" : "ABOVE"} the ${TARGET_MS} ms target`;
    results.push(line);
    log(line);
  }

  log("\neach statement alone (in process, median of 10):");
  for (const windowDays of [30, 365]) {
    const end = new Date();
    const w: Windows = {
      end,
      currentStart: new Date(end.getTime() - windowDays * 86_400_000),
      previousStart: new Date(end.getTime() - 2 * windowDays * 86_400_000),
    };
    const competitors = (
      await pool.query<{ id: string }>("SELECT id::text FROM entities WHERE parent_entity_id = $1 AND kind = 'competitor'", [entityId])
    ).rows.map((r) => r.id);
    const time = async (name: string, fn: () => Promise<unknown>) => {
      const samples: number[] = [];
      for (let i = 0; i < 10; i++) {
        const t0 = performance.now();
        await fn();
        samples.push(performance.now() - t0);
      }
      log(`  window ${String(windowDays).padStart(3)} days, ${name.padEnd(34)} ${ms(summary(samples).p50)}`);
    };
    const db = app.deps.db;
    await time("originals per platform and window", () => platformCounts(db, entityId, w));
    await time("units per entity, aspect and side", () => aspectCounts(db, [entityId, ...competitors], w));
    const windowStatements = (await aspectCounts(db, [entityId], w))
      .filter((r) => r.level === 0 && r.current)
      .reduce((n, r) => n + r.statements, 0);
    await time("quotes (10 themes x 1 side)", () =>
      quoteCandidates(
        db,
        ["pricing", "stability", "performance", "sync", "support", "search", "export", "onboarding", "ui", "mobile app"].map(
          (aspect, i) => ({
            entityId,
            aspect,
            side: i % 2 === 0 ? "complaint" : "praise",
          }),
        ),
        w,
        12,
        // As the service decides: the entity's statements in the current window.
        new Map([[entityId, windowStatements]]),
      ),
    );
    await time("latest coverage", () => latestCoverage(db, entityId));
  }

  log("\nsummary:");
  for (const line of results) log(`  ${line}`);
  app.server.close();
  await closeDeps(app.deps);
  await pool.end();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
