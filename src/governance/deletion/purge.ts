import type { Db, DbTx } from "../../platform/db.js";
import type { AppDeps } from "../../platform/deps.js";
import { deleteOriginals, retryingTransaction } from "./cascade.js";
import { cancelWorkspaceJobs } from "./workspaces.js";

/**
 * Purging a deleted workspace once its grace period is over (run by the scheduled pass,
 * retention.ts). Everything of the workspace goes, in steps that are each idempotent, so a purge that
 * stopped (a crash, a deploy) resumes at the next pass where it was:
 *
 * 1. live jobs are cancelled again (one started in the moment before the deletion committed);
 * 2. what quotes originals (runs, analyses, knowledge records) goes first, so the cascade has nothing
 *    to rewrite; then the originals through the cascade (cascade.ts) with reason `workspace_deleted`,
 *    RETENTION_BATCH_SIZE per transaction;
 * 3. the rest, table by table, then the workspace row with what its foreign keys still cascade to
 *    (deletion records of its entities and knowledge records, its retention report).
 *
 * A table added later that holds a workspace's rows needs a step here: test/deletion/purge-tables.test.ts
 * reads the catalogue for every such table and fails until it is seeded there and purged here.
 *
 * Outside the workspace only `workspace_deletions` stays: ids, times and the counts removed per step,
 * never a name or a word of the workspace. Saved context pages are their users' (not the workspace's):
 * they stay, without their link to a purged project. API keys are their users' and stay.
 */
type Deps = AppDeps;

const E = (w: string) => `(SELECT id FROM entities WHERE workspace_id = '${w}'::uuid)`;
const P = (w: string) => `(SELECT id FROM projects WHERE workspace_id = '${w}'::uuid)`;

/** Statements over one workspace (its id is a uuid read from the database, never caller input). */
const BEFORE_ORIGINALS: [string, (w: string) => string][] = [
  [
    "staged_jobs",
    (w) => `DELETE FROM job_outbox WHERE payload->>'runId' IN (SELECT id::text FROM workflow_runs WHERE workspace_id = '${w}'::uuid)`,
  ],
  ["routines", (w) => `DELETE FROM skill_routines WHERE workspace_id = '${w}'::uuid`],
  ["workflow_runs", (w) => `DELETE FROM workflow_runs WHERE workspace_id = '${w}'::uuid`],
  ["credit_ledger_entries", (w) => `DELETE FROM credit_ledger WHERE workspace_id = '${w}'::uuid`],
  ["quotes", (w) => `DELETE FROM quotes WHERE entity_id IN ${E(w)}`],
  [
    "insights",
    (w) =>
      `DELETE FROM entity_insights WHERE entity_id IN ${E(w)}
         OR analysis_id IN (SELECT id FROM analyses WHERE workspace_id = '${w}'::uuid)`,
  ],
  [
    "analyses",
    (w) => `DELETE FROM analyses WHERE id IN (SELECT id FROM analyses WHERE workspace_id = '${w}'::uuid OR entity_id IN ${E(w)} LIMIT 500)`,
  ],
  ["action_executions", (w) => `DELETE FROM action_executions WHERE workspace_id = '${w}'::uuid`],
  ["actions", (w) => `DELETE FROM actions WHERE workspace_id = '${w}'::uuid`],
  ["knowledge_records", (w) => `DELETE FROM knowledge_insights WHERE workspace_id = '${w}'::uuid`],
  // The change feed outlives a single record (it is its scope's): it goes with the workspace's scopes.
  ["knowledge_changes", (w) => `DELETE FROM knowledge_changes WHERE scope_id = '${w}'::uuid OR scope_id IN ${E(w)} OR scope_id IN ${P(w)}`],
  ["knowledge_snapshots", (w) => `DELETE FROM knowledge_source_revisions WHERE workspace_id = '${w}'::uuid`],
  ["knowledge", (w) => `DELETE FROM knowledge WHERE workspace_id = '${w}'::uuid`],
  ["knowledge_scopes", (w) => `DELETE FROM knowledge_scopes WHERE scope_id = '${w}'::uuid OR scope_id IN ${E(w)} OR scope_id IN ${P(w)}`],
];

const AFTER_ORIGINALS: [string, (w: string) => string][] = [
  ["opinion_units", (w) => `DELETE FROM opinion_units WHERE entity_id IN ${E(w)}`],
  ["opinion_rollups", (w) => `DELETE FROM opinion_rollups WHERE entity_id IN ${E(w)}`],
  ["opinion_source_rollups", (w) => `DELETE FROM opinion_source_rollups WHERE entity_id IN ${E(w)}`],
  ["content_count_deltas", (w) => `DELETE FROM content_count_deltas WHERE entity_id IN ${E(w)}`],
  ["content_day_deltas", (w) => `DELETE FROM content_day_deltas WHERE entity_id IN ${E(w)}`],
  ["coverage_records", (w) => `DELETE FROM coverage_records WHERE entity_id IN ${E(w)}`],
  ["collection_jobs", (w) => `DELETE FROM collection_jobs WHERE entity_id IN ${E(w)}`],
  ["note_syncs", (w) => `DELETE FROM note_syncs WHERE entity_id IN ${E(w)}`],
  ["sweep_runs", (w) => `DELETE FROM sweep_runs WHERE entity_id IN ${E(w)}`],
  ["skills", (w) => `DELETE FROM skills WHERE entity_id IN ${E(w)} OR project_id IN ${P(w)}`],
  ["onboarding_requests", (w) => `DELETE FROM onboarding_requests WHERE response->>'workspace_id' = '${w}'`],
  ["pages_unlinked", (w) => `UPDATE pages SET project_id = NULL WHERE project_id IN ${P(w)}`],
  [
    "webhook_deliveries",
    (w) => `DELETE FROM webhook_deliveries WHERE endpoint_id IN (SELECT id FROM webhook_endpoints WHERE workspace_id = '${w}'::uuid)`,
  ],
  ["webhook_endpoints", (w) => `DELETE FROM webhook_endpoints WHERE workspace_id = '${w}'::uuid`],
  ["share_links", (w) => `DELETE FROM share_links WHERE workspace_id = '${w}'::uuid`],
  ["author_erasures", (w) => `DELETE FROM author_erasures WHERE workspace_id = '${w}'::uuid`],
  ["tombstones", (w) => `DELETE FROM content_deletions WHERE workspace_id = '${w}'::uuid`],
  ["invitations", (w) => `DELETE FROM workspace_invitations WHERE workspace_id = '${w}'::uuid`],
  ["members", (w) => `DELETE FROM workspace_members WHERE workspace_id = '${w}'::uuid`],
  ["audit_entries", (w) => `DELETE FROM workspace_audit WHERE workspace_id = '${w}'::uuid`],
  ["entities", (w) => `DELETE FROM entities WHERE workspace_id = '${w}'::uuid`],
  ["projects", (w) => `DELETE FROM projects WHERE workspace_id = '${w}'::uuid`],
];

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Purges every deleted workspace whose grace period is over; answers their ids. */
export async function purgeDueWorkspaces(deps: Deps, batchSize: number): Promise<string[]> {
  const due = await deps.db.$queryRaw<{ id: string }[]>`
    SELECT id FROM workspaces WHERE state = 'deleting' AND purge_after <= now() ORDER BY purge_after, id`;
  const purged: string[] = [];
  for (const { id } of due) if (await purgeWorkspace(deps, id, batchSize)) purged.push(id);
  return purged;
}

/** Purges one workspace if it is deleting and due (false otherwise); safe to run again or concurrently. */
export async function purgeWorkspace(deps: Deps, workspaceId: string, batchSize: number): Promise<boolean> {
  if (!UUID_RE.test(workspaceId)) return false;
  const db = deps.db;
  const [ws] = await db.$queryRaw<{ due: boolean }[]>`
    SELECT purge_after <= now() AS due FROM workspaces WHERE id = ${workspaceId}::uuid AND state = 'deleting'`;
  if (!ws?.due) return false;
  // Past purge_after nothing restores it (restore refuses), so from here the purge only goes forward.
  const claimed = await db.$executeRaw`
    UPDATE workspace_deletions SET status = 'purging', purge_started_at = COALESCE(purge_started_at, now())
    WHERE workspace_id = ${workspaceId}::uuid AND status IN ('pending', 'purging')`;
  if (claimed === 0) {
    await db.$executeRaw`
      INSERT INTO workspace_deletions (id, workspace_id, status, purge_after, purge_started_at)
      SELECT gen_random_uuid(), id, 'purging', purge_after, now() FROM workspaces WHERE id = ${workspaceId}::uuid
      ON CONFLICT DO NOTHING`;
  }
  const cancelled = await cancelWorkspaceJobs(deps, workspaceId);
  if (cancelled > 0) await addRemoved(db, workspaceId, { jobs_cancelled_at_purge: cancelled });

  for (const [name, sql] of BEFORE_ORIGINALS) {
    // "analyses" deletes 500 at a time (their events and the sources behind their insights go with them, by
    // foreign key): repeated until none is left.
    for (;;) {
      const n = await db.$executeRawUnsafe(sql(workspaceId));
      if (n > 0) await addRemoved(db, workspaceId, { [name]: n });
      if (name !== "analyses" || n === 0) break;
    }
  }
  let deleted: number;
  do deleted = await originalsBatch(db, workspaceId, batchSize);
  while (deleted > 0);
  for (const [name, sql] of AFTER_ORIGINALS) {
    const n = await db.$executeRawUnsafe(sql(workspaceId));
    if (n > 0) await addRemoved(db, workspaceId, { [name]: n });
  }
  await db.$transaction(async (tx) => {
    await tx.$executeRaw`DELETE FROM workspaces WHERE id = ${workspaceId}::uuid AND state = 'deleting'`;
    await tx.$executeRaw`
      UPDATE workspace_deletions SET status = 'purged', purged_at = now()
      WHERE workspace_id = ${workspaceId}::uuid AND status = 'purging'`;
  });
  deps.logger.info({ workspaceId }, "deleted workspace purged");
  return true;
}

/** One transaction: up to `batchSize` originals of the workspace with everything below them. */
async function originalsBatch(db: Db, workspaceId: string, batchSize: number): Promise<number> {
  return retryingTransaction(db, async (tx) => {
    const ids = await tx.$queryRaw<{ id: string }[]>`
            SELECT id FROM content_store WHERE workspace_id = ${workspaceId}::uuid ORDER BY id LIMIT ${batchSize}`;
    if (ids.length === 0) return 0;
    const { counts } = await deleteOriginals(tx, {
      workspaceId,
      rootIds: ids.map((r) => r.id),
      reason: "workspace_deleted",
      actorId: null,
      erasureId: null,
    });
    await addRemoved(tx, workspaceId, { content_rows: counts.rows, opinion_units: counts.opinion_units });
    return ids.length;
  });
}

/** Adds to the deletion record's counts (`removed`, by step). */
async function addRemoved(db: Db | DbTx, workspaceId: string, counts: Record<string, number>): Promise<void> {
  for (const [key, n] of Object.entries(counts)) {
    if (n === 0) continue;
    await db.$executeRaw`
      UPDATE workspace_deletions SET removed = removed || jsonb_build_object(${key}::text, COALESCE((removed->>${key})::bigint, 0) + ${n})
      WHERE workspace_id = ${workspaceId}::uuid AND status = 'purging'`;
  }
}
