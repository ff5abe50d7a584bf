import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCollectionJob } from "../../src/intake/collection/runner.js";
import { NEVER_CANCELLED } from "../../src/jobs/cancellation.js";
import { Prisma, queryNamed, querySql } from "../../src/platform/db.js";
import { createJob, newEntity } from "../collection/support.js";
import { createHarness, type Harness } from "../helpers/harness.js";

/**
 * The hot statements of collection jobs run as named prepared statements: the server keeps them per
 * connection (pg_prepared_statements), parses them once, and the answers are what an unnamed run gives.
 * `DATABASE_NAMED_STATEMENTS=false` sends them unnamed. Real PostgreSQL; one connection per pool, so the
 * session that prepared a statement is the one asked about it.
 */
let named: Harness;
let unnamed: Harness;

beforeAll(async () => {
  named = await createHarness({ DATABASE_POOL_SIZE: "1" });
  unnamed = await createHarness({ DATABASE_POOL_SIZE: "1", DATABASE_NAMED_STATEMENTS: "false" });
});
afterAll(async () => {
  await named?.close();
  await unnamed?.close();
});

const prepared = async (h: Harness) =>
  (await h.deps.pool.query<{ statement: string }>("SELECT statement FROM pg_prepared_statements")).rows.map((r) => r.statement);

const TEXT = "SELECT $1::int + 1 AS n, $2::text[] AS words";

describe("named statements", () => {
  it("are prepared once per connection and answer as an unnamed statement does", async () => {
    for (let i = 0; i < 7; i++) {
      expect(await queryNamed(named.deps.pool, TEXT, [i, ["a", "b"]])).toEqual([{ n: i + 1, words: ["a", "b"] }]);
    }
    expect((await prepared(named)).filter((s) => s === TEXT)).toHaveLength(1);
    // A statement built with Prisma.sql runs the same on the pool (named) as through the client.
    const sql = Prisma.sql`SELECT ${41}::int + 1 AS n, ${"x"}::text AS s`;
    expect(await querySql(named.deps.pool, sql)).toEqual(await querySql(named.deps.db, sql));
    expect(await prepared(named)).toContain(sql.text);
  });

  it("are sent unnamed when DATABASE_NAMED_STATEMENTS is false", async () => {
    expect(await queryNamed(unnamed.deps.pool, TEXT, [1, []])).toEqual([{ n: 2, words: [] }]);
    expect(await prepared(unnamed)).not.toContain(TEXT);
  });

  it("serve a collection job's claim, settle and completion", async () => {
    const token = await named.token();
    const entity = await newEntity(named, token, { name: "Namedco" });
    const res = await createJob(named, token, { entity_id: entity.id, objective: "Named", platforms: ["web"], collection_only: true });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const result = await runCollectionJob(named.deps, res.body.job_id as string, {
      collectors: {
        web: { platform: "web", blockedReason: () => null, describe: () => "named", fetchPage: async () => ({ sources: [], next: null }) },
      },
      cancel: NEVER_CANCELLED,
      finalAttempt: false,
    });
    expect(result.status).toBe("completed");
    const statements = await prepared(named);
    expect(statements.some((s) => s.includes("INSERT INTO collection_jobs"))).toBe(true);
    expect(statements.some((s) => s.includes("SET attempts = attempts + 1"))).toBe(true);
    expect(statements.some((s) => s.includes("INSERT INTO coverage_records"))).toBe(true);
  });
});
