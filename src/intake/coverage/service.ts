import { randomUUID } from "node:crypto";
import { type Db, type DbTx, Prisma, querySql, type SqlRunner } from "../../platform/db.js";
import type { CoverageState } from "../../platform/vocabulary.js";
import { storableJson, storableText } from "../ingest/dedup.js";
import { type RemovalColumns, removedAfter } from "./removals.js";
import type { CoverageInput, CoverageResponse, RemovedAfter } from "./schemas.js";

/**
 * Coverage records: one per (entity, run, collector). Posting the same run again
 * replaces the record and its targets. Writers of the same record take turns (a
 * transaction-scoped advisory lock), so racing posts end with one record and the target
 * list of one of them. What the deletion cascade tallied of the run's rows removed since
 * (removals.ts) stays: a repost does not bring them back.
 */
export async function recordCoverage(db: Db, entity: { id: string }, input: CoverageInput): Promise<CoverageResponse> {
  const runId = input.run_id ?? randomUUID();
  const key = `coverage:${entity.id}:${runId}:${input.collector}`;
  const recorded = await db.$transaction(async (tx) => {
    await tx.$executeRaw`SELECT 1 FROM pg_advisory_xact_lock(hashtextextended(${key}, 0))`;
    // A statement after the lock: its snapshot sees the targets of the writer before.
    return recordCoverageIf(tx, entity, { ...input, run_id: runId }, Prisma.sql`SELECT 1`);
  });
  if (!recorded) throw new Error("coverage upsert returned no row");
  return recorded;
}

/**
 * Writes a coverage record and its targets in one statement together with `guard`, a statement
 * that must return a row for anything to be written (e.g. a fenced UPDATE … RETURNING): atomic
 * with it, one round trip. Returns null, writing nothing, when the guard returns no row.
 * The removal of a replaced record's targets sees those committed before the statement began,
 * so writers of one record must not race: `recordCoverage` makes them take turns; a collection
 * run's guard is its fenced progress write (one live run per job).
 */
export async function recordCoverageIf(
  db: SqlRunner,
  entity: { id: string },
  input: CoverageInput,
  guard: Prisma.Sql,
): Promise<CoverageResponse | null> {
  const runId = input.run_id ?? randomUUID();
  const targets = input.targets.map((t, position) => ({
    position,
    target: storableText(t.target),
    target_type: t.target_type,
    role: t.role,
    source_group: t.source_group ?? null,
    sender_type: t.sender_type ?? null,
    status: t.status,
    items_found: t.items_found,
    items_stored: t.items_stored,
    cursor_start: t.cursor_start ?? null,
    cursor_end: t.cursor_end ?? null,
    reached_end: t.reached_end ?? null,
    error: t.error === undefined ? null : storableText(t.error),
    metadata: t.metadata === undefined ? null : storableJson(t.metadata),
  }));
  const totals = JSON.stringify(storableJson(input.totals));

  // The guard, the upsert, the removal of a replaced record's targets and the new targets:
  // data-modifying CTEs of one statement (the DELETE sees only the targets that were there before it).
  const rows = await querySql<{ recorded: number } & RemovalColumns>(
    db,
    Prisma.sql`
    WITH guard AS (${guard}),
    record AS (
      INSERT INTO coverage_records (
        id, entity_id, run_id, collector, collection_scope, coverage_state, query, started_at, finished_at, totals, notes
      )
      SELECT
        gen_random_uuid(), ${entity.id}::uuid, ${storableText(runId)}, ${input.collector}, ${storableText(input.collection_scope)},
        ${input.coverage_state}, ${input.query === undefined ? null : storableText(input.query)}::text,
        ${input.started_at ?? null}::text, ${input.finished_at ?? null}::text, ${totals}::jsonb,
        ${input.notes === undefined ? null : storableText(input.notes)}::text
      WHERE EXISTS (SELECT 1 FROM guard)
      ON CONFLICT (entity_id, run_id, collector) DO UPDATE SET
        collection_scope = EXCLUDED.collection_scope, coverage_state = EXCLUDED.coverage_state, query = EXCLUDED.query,
        started_at = EXCLUDED.started_at, finished_at = EXCLUDED.finished_at, totals = EXCLUDED.totals,
        notes = EXCLUDED.notes, updated_at = clock_timestamp()
      RETURNING id, removed_deleted, removed_author_erased, removed_retention, last_removed_at
    ),
    replaced AS (
      DELETE FROM coverage_targets ct USING record WHERE ct.coverage_record_id = record.id
    ),
    inserted AS (
      INSERT INTO coverage_targets (
        id, coverage_record_id, position, target, target_type, role, source_group, sender_type, status,
        items_found, items_stored, cursor_start, cursor_end, reached_end, error, metadata
      )
      SELECT gen_random_uuid(), record.id, t.position, t.target, t.target_type, t.role, t.source_group, t.sender_type,
        t.status, t.items_found, t.items_stored, t.cursor_start, t.cursor_end, t.reached_end, t.error, t.metadata
      FROM record, json_to_recordset(${JSON.stringify(targets)}::json) AS t(
        position int, target text, target_type text, role text, source_group text, sender_type text, status text,
        items_found int, items_stored int, cursor_start text, cursor_end text, reached_end boolean, error text, metadata jsonb
      )
      RETURNING 1
    )
    SELECT (SELECT count(*) FROM inserted)::int AS recorded, removed_deleted, removed_author_erased, removed_retention, last_removed_at
    FROM record`,
  );
  if (!rows[0]) return null;

  return {
    status: "recorded",
    entity_id: entity.id,
    run_id: runId,
    coverage_state: input.coverage_state,
    targets_recorded: rows[0].recorded,
    removed_after: removedAfter(rows[0]),
  };
}

export interface LatestCoverage {
  entityId: string;
  platform: string;
  coverageState: CoverageState;
  collectionScope: string;
  runId: string;
  startedAt: string | null;
  finishedAt: string | null;
  /** When the record was last written. */
  recordedAt: Date;
  /** Rows the run stored that were removed afterwards (removals.ts). */
  removedAfter: RemovedAfter;
}

/** The most recently recorded coverage of each (entity, collector) among the given entities. */
export async function latestCoverage(db: Db | DbTx, entityIds: string[], platform?: string): Promise<LatestCoverage[]> {
  if (entityIds.length === 0) return [];
  const rows = await db.$queryRaw<
    ({
      entity_id: string;
      collector: string;
      coverage_state: string;
      collection_scope: string;
      run_id: string;
      started_at: string | null;
      finished_at: string | null;
      updated_at: Date;
    } & RemovalColumns)[]
  >`
    SELECT DISTINCT ON (entity_id, collector)
      entity_id, collector, coverage_state, collection_scope, run_id, started_at, finished_at, updated_at,
      removed_deleted, removed_author_erased, removed_retention, last_removed_at
    FROM coverage_records
    WHERE entity_id = ANY(${entityIds}::uuid[]) AND (${platform ?? null}::text IS NULL OR collector = ${platform ?? null}::text)
    ORDER BY entity_id, collector, updated_at DESC, created_at DESC, id DESC`;
  return rows.map((r) => ({
    entityId: r.entity_id,
    platform: r.collector,
    coverageState: r.coverage_state as CoverageState,
    collectionScope: r.collection_scope,
    runId: r.run_id,
    startedAt: r.started_at,
    finishedAt: r.finished_at,
    recordedAt: r.updated_at,
    removedAfter: removedAfter(r),
  }));
}

/** The latest coverage state per platform for one entity, keyed by platform. */
export async function latestCoverageByPlatform(db: Db | DbTx, entity: { id: string }): Promise<Map<string, LatestCoverage>> {
  const rows = await latestCoverage(db, [entity.id]);
  return new Map(rows.map((r) => [r.platform, r]));
}
