import type pg from "pg";
import { activeMembershipsOf } from "../../access/workspaces/access.js";
import { groupedRowsById, Prisma } from "../../platform/db.js";
import { COLLECTOR_PLATFORMS } from "./collectors/types.js";

/** A new collection job's row as the create writes it (the columns the caller decides). */
export interface NewJob {
  id: string;
  user_id: string;
  entity_id: string;
  idempotency_key: string;
  request_hash: string;
  queue_job_id: string;
  route: string;
  objective: string;
  questions: string[];
  depth: string;
  /** The platforms asked for (repeats dropped); empty: the entity's defaults. */
  requested: string[];
  collection_only: boolean;
  /** A workflow run's step: authorised when the run started, so no membership is checked now. */
  for_run: boolean;
}

export interface JobRow {
  id: string;
  entity_id: string;
  request_hash: string;
  status: string;
  analysis_id: string | null;
  route: string;
  queue_job_id: string;
}

/**
 * The insert of the rows of many creates: each row only if its caller may write in the entity's
 * workspace (editor or above; any run of theirs), its platforms defaulted as `defaultPlatforms()` says
 * (order kept, repeats dropped). Progress starts empty: readers fill in `pending`. A row whose id or
 * (user, key, attempt) is taken is skipped. One text whatever the rows (a named statement).
 */
function insertSql(jobs: readonly NewJob[]): Prisma.Sql {
  const collectors = [...COLLECTOR_PLATFORMS];
  return Prisma.sql`
    INSERT INTO collection_jobs (
      id, user_id, entity_id, idempotency_key, request_hash, queue_job_id, route, status,
      objective, questions, depth, platforms, collection_only, progress, updated_at
    )
    SELECT r.id, r.user_id, e.id, r.idempotency_key, r.request_hash, r.queue_job_id, r.route, 'queued',
      r.objective, r.questions, r.depth,
      CASE
        WHEN cardinality(r.requested) > 0 THEN r.requested
        WHEN cardinality(e.platforms) = 0 THEN ${collectors}::text[]
        WHEN e.platforms && ${collectors}::text[] THEN ARRAY(
          SELECT p FROM unnest(e.platforms) WITH ORDINALITY AS u(p, i)
          WHERE p = ANY(${collectors}::text[]) AND NOT (p = ANY(e.platforms[1:(i - 1)::int])) ORDER BY i)
        ELSE ARRAY(
          SELECT p FROM unnest(e.platforms) WITH ORDINALITY AS u(p, i)
          WHERE NOT (p = ANY(e.platforms[1:(i - 1)::int])) ORDER BY i)
      END,
      r.collection_only, '{}'::jsonb, now()
    FROM json_to_recordset(${JSON.stringify(jobs)}::json) AS r(
      id uuid, user_id uuid, entity_id uuid, idempotency_key text, request_hash text, queue_job_id text, route text,
      objective text, questions text[], depth text, requested text[], collection_only boolean, for_run boolean
    )
    JOIN entities e ON e.id = r.entity_id
    WHERE r.for_run OR EXISTS (
      SELECT 1 FROM ${activeMembershipsOf(Prisma.raw("r.user_id"), "editor")} m WHERE m.workspace_id = e.workspace_id)
    ON CONFLICT DO NOTHING
    RETURNING id, entity_id, request_hash, status, analysis_id, route, queue_job_id`;
}

/** The insert's text, the same for any rows (only its values change). */
const INSERT_TEXT = insertSql([]).text;

/**
 * Inserts a create's row: the creates that come while an insert is in flight go out together as one
 * statement (`groupedRowsById`: under load, one commit serves many requests; alone, a create goes out at
 * once). Two creates of one id never share a statement. Answers the row, or undefined when nothing was
 * inserted (the id or key is taken, the entity is gone, or the caller may not write there); a statement that
 * fails is retried row by row, so one bad row fails only its own create.
 */
export function insertJob(pool: pg.Pool, job: NewJob): Promise<JobRow | undefined> {
  return groupedRowsById<NewJob, JobRow>(
    pool,
    INSERT_TEXT,
    (j) => j.id,
    (jobs) => insertSql(jobs).values,
  )(job);
}
