import { createHash, randomUUID } from "node:crypto";
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import pg from "pg";
import { projectRoot } from "./paths.js";

/**
 * Applies the SQL migrations in prisma/migrations and records them in
 * `_prisma_migrations` exactly as `prisma migrate deploy` does, so either tool can take
 * over on a machine that has Prisma's schema engine:
 * - folders apply in name order; each row holds a uuid id, the sha256 hex checksum of
 *   migration.sql, the folder name, start/finish times and applied_steps_count;
 * - the whole run holds Postgres advisory lock 72707369 (Prisma Migrate's), so
 *   concurrent release processes apply each migration once;
 * - an applied migration whose file changed (checksum mismatch) or a migration recorded
 *   as failed stops the run before anything else is applied.
 */
export const MIGRATE_LOCK_ID = 72707369;

export class MigrationError extends Error {
  override name = "MigrationError";
}

export interface MigrationFile {
  name: string;
  sql: string;
  checksum: string;
}

export function readMigrations(dir: string): MigrationFile[] {
  return readdirSync(dir)
    .filter((name) => statSync(path.join(dir, name)).isDirectory())
    .sort()
    .map((name) => {
      const bytes = readFileSync(path.join(dir, name, "migration.sql"));
      return { name, sql: bytes.toString("utf8"), checksum: createHash("sha256").update(bytes).digest("hex") };
    });
}

const CREATE_TABLE = `CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
    "id"                    VARCHAR(36) PRIMARY KEY NOT NULL,
    "checksum"              VARCHAR(64) NOT NULL,
    "finished_at"           TIMESTAMPTZ,
    "migration_name"        VARCHAR(255) NOT NULL,
    "logs"                  TEXT,
    "rolled_back_at"        TIMESTAMPTZ,
    "started_at"            TIMESTAMPTZ NOT NULL DEFAULT now(),
    "applied_steps_count"   INTEGER NOT NULL DEFAULT 0
)`;

interface AppliedRow {
  id: string;
  checksum: string;
  migration_name: string;
  finished_at: Date | null;
  rolled_back_at: Date | null;
}

export async function migrate(databaseUrl: string, dir: string, log: (line: string) => void = () => {}): Promise<{ applied: string[] }> {
  const migrations = readMigrations(dir);
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  const applied: string[] = [];
  try {
    await client.query("SELECT pg_advisory_lock($1)", [MIGRATE_LOCK_ID]);
    try {
      await client.query(CREATE_TABLE);
      const { rows } = await client.query<AppliedRow>(
        `SELECT id, checksum, migration_name, finished_at, rolled_back_at FROM "_prisma_migrations" ORDER BY started_at`,
      );
      const failed = rows.find((r) => r.finished_at === null && r.rolled_back_at === null);
      if (failed) {
        throw new MigrationError(
          `Migration ${failed.migration_name} is recorded as failed. Fix the database by hand, then mark it rolled back before migrating again.`,
        );
      }
      const done = new Map(rows.filter((r) => r.finished_at !== null && r.rolled_back_at === null).map((r) => [r.migration_name, r]));
      for (const m of migrations) {
        const row = done.get(m.name);
        if (row && row.checksum !== m.checksum) {
          throw new MigrationError(`Migration ${m.name} was modified after it was applied (checksum mismatch).`);
        }
      }
      for (const m of migrations) {
        if (done.has(m.name)) continue;
        const id = randomUUID();
        await client.query(
          `INSERT INTO "_prisma_migrations" (id, checksum, migration_name, started_at, applied_steps_count) VALUES ($1, $2, $3, now(), 0)`,
          [id, m.checksum, m.name],
        );
        try {
          // One simple-protocol query: Postgres runs the whole script as one implicit transaction.
          await client.query(m.sql);
        } catch (err) {
          await client.query(`UPDATE "_prisma_migrations" SET logs = $2 WHERE id = $1`, [id, String((err as Error).message)]);
          throw new MigrationError(`Migration ${m.name} failed: ${(err as Error).message}`);
        }
        await client.query(`UPDATE "_prisma_migrations" SET finished_at = now(), applied_steps_count = 1 WHERE id = $1`, [id]);
        applied.push(m.name);
        log(`applied ${m.name}`);
      }
    } finally {
      await client.query("SELECT pg_advisory_unlock($1)", [MIGRATE_LOCK_ID]).catch(() => {});
    }
  } finally {
    await client.end();
  }
  return { applied };
}

export const MIGRATIONS_DIR = path.join(projectRoot(), "prisma", "migrations");
