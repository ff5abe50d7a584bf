import { randomUUID } from "node:crypto";
import { cpSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import pg from "pg";
import { afterAll, describe, expect, inject, it } from "vitest";
import { dropDatabase, onServer, withDatabase } from "../../src/platform/database-admin.js";
import { MIGRATIONS_DIR, migrate } from "../../src/platform/migrate.js";
import { randomId } from "../helpers/harness.js";

/**
 * Skills stored before skill ids were the caller's keep the uuid their callers hold: the migration
 * that introduces keys gives each existing skill its uuid as its id, and each run and routine the id of
 * the skill it ran for.
 */
const KEYS_MIGRATION = "20261126090000_skill_keys";
const baseUrl = inject("databaseUrl");
const dirs: string[] = [];
const databases: string[] = [];

afterAll(async () => {
  for (const name of databases) await dropDatabase(baseUrl, name);
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

async function query<T extends pg.QueryResultRow>(url: string, sql: string, params: unknown[] = []) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(sql, params)).rows;
  } finally {
    await client.end();
  }
}

describe(`migration ${KEYS_MIGRATION}`, () => {
  it("gives every stored skill its uuid as its id, and runs and routines the id of their skill", async () => {
    const name = `${inject("templateDb")}_k${randomId()}`;
    await onServer(baseUrl, (c) => c.query(`CREATE DATABASE "${name}"`));
    databases.push(name);
    const url = withDatabase(baseUrl, name);
    // The schema as it was before: every migration older than the one under test.
    const before = mkdtempSync(path.join(tmpdir(), "res-skill-keys-"));
    dirs.push(before);
    for (const dir of readdirSync(MIGRATIONS_DIR, { withFileTypes: true })) {
      if (dir.isDirectory() && dir.name < KEYS_MIGRATION)
        cpSync(path.join(MIGRATIONS_DIR, dir.name), path.join(before, dir.name), { recursive: true });
    }
    await migrate(url, before);

    const [entity, workspace, user, skillA, skillB] = [randomUUID(), randomUUID(), randomUUID(), randomUUID(), randomUUID()];
    await query(
      url,
      `INSERT INTO skills (id, entity_id, objective_key, title) VALUES ($1, $3, 'objective-1', 'A'), ($2, $3, 'objective-1', 'B')`,
      [skillA, skillB, entity],
    );
    await query(
      url,
      `INSERT INTO skill_routines (id, skill_id, entity_id, workspace_id, enabled, interval_hours, source_mode, max_charge_cents, created_by, updated_by, next_run_at)
       VALUES ($1, $2, $3, $4, true, 24, 'saved', 100, $5, $5, now())`,
      [randomUUID(), skillA, entity, workspace, user],
    );
    await query(
      url,
      `INSERT INTO workflow_runs (id, skill_id, entity_id, workspace_id, user_id, idempotency_key, request_hash, scope_hash, source_mode, max_charge_credits)
       VALUES ($1, $2, $3, $4, $5, 'key-00001', 'r', 's', 'saved', 10)`,
      [randomUUID(), skillB, entity, workspace, user],
    );

    const { applied } = await migrate(url, MIGRATIONS_DIR);
    expect(applied).toContain(KEYS_MIGRATION);
    // Two skills of one entity that shared an objective key still get distinct ids: their uuids.
    const skills = await query<{ id: string; key: string; objective_key: string }>(
      url,
      "SELECT id, key, objective_key FROM skills ORDER BY title",
    );
    expect(skills).toEqual([
      { id: skillA, key: skillA, objective_key: "objective-1" },
      { id: skillB, key: skillB, objective_key: "objective-1" },
    ]);
    expect(await query(url, "SELECT skill_key FROM skill_routines")).toEqual([{ skill_key: skillA }]);
    expect(await query(url, "SELECT skill_key FROM workflow_runs")).toEqual([{ skill_key: skillB }]);
    // A new skill may not take an id its entity already uses.
    await expect(
      query(url, `INSERT INTO skills (id, entity_id, key, title) VALUES ($1, $2, $3, 'C')`, [randomUUID(), entity, skillA]),
    ).rejects.toThrow(/skills_entity_id_key_key/);
  });
});
