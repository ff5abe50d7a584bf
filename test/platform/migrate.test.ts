import { cpSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { dropDatabase, onServer, withDatabase } from "../../src/platform/database-admin.js";
import { MIGRATIONS_DIR, MigrationError, migrate, readMigrations } from "../../src/platform/migrate.js";
import { randomId } from "../helpers/harness.js";

const baseUrl = inject("databaseUrl");
const created: string[] = [];
let workDir: string;

async function freshDb(): Promise<string> {
  const name = `${inject("templateDb")}_m${randomId()}`;
  await onServer(baseUrl, (c) => c.query(`CREATE DATABASE "${name}"`));
  created.push(name);
  return withDatabase(baseUrl, name);
}

async function rows(url: string) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const res = await client.query(
      `SELECT id, checksum, migration_name, finished_at, logs, rolled_back_at, started_at, applied_steps_count FROM "_prisma_migrations" ORDER BY migration_name`,
    );
    return res.rows;
  } finally {
    await client.end();
  }
}

beforeAll(() => {
  workDir = mkdtempSync(path.join(tmpdir(), "res-migrations-"));
});
afterAll(async () => {
  for (const name of created) await dropDatabase(baseUrl, name);
  rmSync(workDir, { recursive: true, force: true });
});

describe("db:migrate", () => {
  it("applies every migration once and records it as prisma migrate deploy does", async () => {
    const url = await freshDb();
    const first = await migrate(url, MIGRATIONS_DIR);
    const expected = readdirSync(MIGRATIONS_DIR, { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .map((d) => d.name)
      .sort();
    expect(first.applied).toEqual(expected);
    const recorded = await rows(url);
    const files = readMigrations(MIGRATIONS_DIR);
    expect(recorded.map((r) => r.migration_name)).toEqual(expected);
    for (const [i, row] of recorded.entries()) {
      expect(row.id).toMatch(/^[0-9a-f-]{36}$/);
      expect(row.checksum).toBe(files[i]?.checksum);
      expect(row.checksum).toMatch(/^[0-9a-f]{64}$/);
      expect(row.finished_at).toBeInstanceOf(Date);
      expect(row.rolled_back_at).toBeNull();
      expect(row.applied_steps_count).toBe(1);
    }
    const second = await migrate(url, MIGRATIONS_DIR);
    expect(second.applied).toEqual([]);
  });

  it("applies each migration once when several processes migrate at the same time", async () => {
    const url = await freshDb();
    const results = await Promise.all([migrate(url, MIGRATIONS_DIR), migrate(url, MIGRATIONS_DIR), migrate(url, MIGRATIONS_DIR)]);
    const appliedCount = results.reduce((n, r) => n + r.applied.length, 0);
    expect(appliedCount).toBe(readMigrations(MIGRATIONS_DIR).length);
    expect((await rows(url)).length).toBe(readMigrations(MIGRATIONS_DIR).length);
  });

  it("refuses to continue when an applied migration's file changed", async () => {
    const url = await freshDb();
    const dir = path.join(workDir, "changed");
    cpSync(MIGRATIONS_DIR, dir, { recursive: true });
    await migrate(url, dir);
    const first = readMigrations(dir)[0]!;
    writeFileSync(path.join(dir, first.name, "migration.sql"), `${first.sql}\n-- edited after apply\n`);
    await expect(migrate(url, dir)).rejects.toThrow(MigrationError);
    await expect(migrate(url, dir)).rejects.toThrow(/checksum mismatch/);
  });

  it("records a failing migration and refuses later runs until it is resolved", async () => {
    const url = await freshDb();
    const dir = path.join(workDir, "failing");
    cpSync(MIGRATIONS_DIR, dir, { recursive: true });
    const broken = "29991231000000_broken";
    cpSync(path.join(dir, readMigrations(dir)[0]!.name), path.join(dir, broken), { recursive: true });
    writeFileSync(path.join(dir, broken, "migration.sql"), "CREATE TABLE ok_part (id int);\nSELECT * FROM no_such_table;\n");
    await expect(migrate(url, dir)).rejects.toThrow(/29991231000000_broken failed/);
    const recorded = await rows(url);
    const failed = recorded.find((r) => r.migration_name === broken);
    expect(failed?.finished_at).toBeNull();
    expect(failed?.logs).toMatch(/no_such_table/);
    // The failed script left nothing behind: it ran as one implicit transaction.
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    const table = await client.query("SELECT to_regclass('ok_part') AS t");
    await client.end();
    expect(table.rows[0].t).toBeNull();
    await expect(migrate(url, dir)).rejects.toThrow(/recorded as failed/);
  });
});
