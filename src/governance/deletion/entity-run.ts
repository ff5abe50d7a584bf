import { audit } from "../../access/workspaces/audit.js";
import { lockErasures } from "../../intake/ingest/erased-authors.js";
import type { DbTx } from "../../platform/db.js";
import type { AppDeps } from "../../platform/deps.js";
import { deleteOriginals, retryingTransaction } from "./cascade.js";
import { cancelEntityJobs, totalCancelled } from "./entity-jobs.js";
import { restAfter } from "./pace.js";

/**
 * Draining an entity's deletion (`entity.delete.v1`, or the request's own caller in tests). The entity's
 * originals go in batches of ERASURE_BATCH_SIZE through the one cascade (cascade.ts: comments, opinion
 * units, embeddings, full-text entries, knowledge snapshots' text; what quoted them elsewhere, e.g. a
 * project's analysis, marked unavailable), each batch one transaction that also adds to the deletion's
 * counters, so a stopped run resumes where it was. A run walks the entity's rows in (created_at, id)
 * order from where its previous batch ended, so a batch never rescans the index entries of rows already
 * deleted (dead until vacuum reaches them), and rests after each batch (pace.ts). When none is left, jobs started on the entity since the
 * request are cancelled and one last transaction removes the entity and everything that hangs off it
 * (`finish`), writes the audit entry and marks the deletion completed.
 */

interface DeletionRow {
  id: string;
  resource_id: string;
  workspace_id: string;
  status: string;
  requested_by: string | null;
}

/**
 * Runs the deletion to its end, or `maxBatches` batches of originals when given (the rest then waits for
 * the next run). Answers whether it completed.
 */
export async function runEntityDeletion(deps: AppDeps, deletionId: string, options: { maxBatches?: number } = {}): Promise<boolean> {
  const size = deps.config.ERASURE_BATCH_SIZE;
  const pace = { factor: deps.config.DELETION_PAUSE_FACTOR };
  let after: Cursor | null = null;
  for (let batches = 0; ; batches++) {
    if (options.maxBatches !== undefined && batches >= options.maxBatches) return false;
    const started = performance.now();
    const outcome = await retryingTransaction(deps.db, (tx) => runBatch(tx, deletionId, size, after));
    if (outcome === "idle") return false;
    if (outcome === "drained") break;
    after = outcome;
    await restAfter(pace, performance.now() - started);
  }
  const row = await deps.db.deletionRecord.findUnique({ where: { id: deletionId } });
  if (row?.status !== "running") return row?.status === "completed";
  // Jobs started on the entity while its originals were drained.
  const cancelled = totalCancelled(await cancelEntityJobs(deps, row.resourceId));
  if (cancelled > 0) {
    await deps.db.$executeRaw`UPDATE deletion_records SET jobs_cancelled = jobs_cancelled + ${cancelled} WHERE id = ${deletionId}::uuid`;
  }
  return (await retryingTransaction(deps.db, (tx) => finish(tx, deletionId, size))) === "completed";
}

async function lockDeletion(tx: DbTx, deletionId: string): Promise<DeletionRow | undefined> {
  const [row] = await tx.$queryRaw<DeletionRow[]>`
    SELECT id, resource_id, workspace_id, status, requested_by FROM deletion_records
    WHERE id = ${deletionId}::uuid AND kind = 'entity' FOR UPDATE`;
  return row?.status === "running" ? row : undefined;
}

/** Where a batch ended: the last row it picked, in the (entity_id, created_at, id) index's order. */
interface Cursor {
  createdAt: Date;
  id: string;
}

/**
 * One batch of the entity's originals (any rows of it: the cascade takes each one's comments along),
 * after `after` when given. Rows stored behind the cursor meanwhile are found by `finish`, which starts
 * from the beginning.
 */
async function deleteBatch(tx: DbTx, row: DeletionRow, size: number, after: Cursor | null = null) {
  const batch = after
    ? await tx.$queryRaw<{ id: string; created_at: Date }[]>`
        SELECT id, created_at FROM content_store
        WHERE entity_id = ${row.resource_id}::uuid AND (created_at, id) > (${after.createdAt}::timestamptz, ${after.id}::uuid)
        ORDER BY created_at, id LIMIT ${size}`
    : await tx.$queryRaw<{ id: string; created_at: Date }[]>`
        SELECT id, created_at FROM content_store WHERE entity_id = ${row.resource_id}::uuid ORDER BY created_at, id LIMIT ${size}`;
  const last = batch.at(-1);
  if (!last) return null;
  const { counts } = await deleteOriginals(tx, {
    workspaceId: row.workspace_id,
    rootIds: batch.map((b) => b.id),
    reason: "deleted",
    actorId: row.requested_by,
    erasureId: null,
  });
  await tx.$executeRaw`
    UPDATE deletion_records SET
      rows_deleted = rows_deleted + ${counts.rows},
      opinion_units_deleted = opinion_units_deleted + ${counts.opinion_units},
      analyses_updated = analyses_updated + ${counts.analyses_updated},
      knowledge_citations_cleared = knowledge_citations_cleared + ${counts.knowledge_citations_cleared},
      batches = batches + 1, updated_at = clock_timestamp()
    WHERE id = ${row.id}::uuid`;
  return { counts, next: { createdAt: last.created_at, id: last.id } };
}

async function runBatch(tx: DbTx, deletionId: string, size: number, after: Cursor | null): Promise<Cursor | "drained" | "idle"> {
  const row = await lockDeletion(tx, deletionId);
  if (!row) return "idle";
  return (await deleteBatch(tx, row, size, after))?.next ?? "drained";
}

/**
 * The last step, one transaction. The workspace's erasure lock (every store path holds it shared while it
 * writes originals) is taken exclusively, so an insert that began before the deletion was requested has
 * committed and its rows are deleted here; later ones are refused by the table's trigger.
 */
async function finish(tx: DbTx, deletionId: string, size: number): Promise<"completed" | "idle"> {
  const row = await lockDeletion(tx, deletionId);
  if (!row) return "idle";
  const entityId = row.resource_id;
  await lockErasures(tx, row.workspace_id);
  await tx.$queryRaw`SELECT id FROM entities WHERE id = ${entityId}::uuid FOR UPDATE`;
  while (await deleteBatch(tx, row, size)) {
    // Originals an insert committed just before this lock; each batch adds to the counters.
  }

  const removed = await removeEntity(tx, row.workspace_id, entityId);
  const [totals] = await tx.$queryRaw<Record<string, number>[]>`
    UPDATE deletion_records SET status = 'completed', error = NULL, removed = ${JSON.stringify(removed)}::jsonb,
      finished_at = clock_timestamp(), updated_at = clock_timestamp()
    WHERE id = ${deletionId}::uuid
    RETURNING originals_matched, rows_deleted, opinion_units_deleted, analyses_updated, knowledge_citations_cleared, batches,
      jobs_cancelled`;
  await audit(tx, row.workspace_id, row.requested_by, "entity.deleted", entityId, {
    entity_id: entityId,
    deletion_id: deletionId,
    ...totals,
    removed,
  });
  return "completed";
}

/** What hangs off an entity, then the entity: counts by kind (its originals are already gone). */
async function removeEntity(tx: DbTx, workspaceId: string, entityId: string): Promise<Record<string, number | string[]>> {
  const analyses = (await tx.$queryRaw<{ id: string }[]>`SELECT id FROM analyses WHERE entity_id = ${entityId}::uuid`).map((r) => r.id);
  const records = (await tx.$queryRaw<{ id: string }[]>`SELECT id FROM knowledge_insights WHERE entity_id = ${entityId}::uuid`).map(
    (r) => r.id,
  );
  const detached = (
    await tx.$queryRaw<{ id: string }[]>`
      UPDATE entities SET parent_entity_id = NULL, updated_at = now() WHERE parent_entity_id = ${entityId}::uuid RETURNING id`
  ).map((r) => r.id);

  const shareLinks = await tx.$executeRaw`
    DELETE FROM share_links WHERE workspace_id = ${workspaceId}::uuid AND (
      (resource_kind = 'entity' AND resource_id = ${entityId}::uuid)
      OR (resource_kind = 'analysis' AND resource_id = ANY(${analyses}::uuid[]))
      OR (resource_kind = 'knowledge_record' AND resource_id = ANY(${records}::uuid[])))`;
  // Runs name their collection job and analysis; skills their routines and quotes.
  const workflowRuns = await tx.$executeRaw`DELETE FROM workflow_runs WHERE entity_id = ${entityId}::uuid`;
  const quotes = await tx.$executeRaw`DELETE FROM quotes WHERE entity_id = ${entityId}::uuid`;
  const routines = await tx.$executeRaw`DELETE FROM skill_routines WHERE entity_id = ${entityId}::uuid`;
  const skills = await tx.$executeRaw`DELETE FROM skills WHERE entity_id = ${entityId}::uuid`;
  const collectionJobs = await tx.$executeRaw`DELETE FROM collection_jobs WHERE entity_id = ${entityId}::uuid`;
  const noteSyncs = await tx.$executeRaw`DELETE FROM note_syncs WHERE entity_id = ${entityId}::uuid`;
  await tx.$executeRaw`
    DELETE FROM entity_insights WHERE entity_id = ${entityId}::uuid OR analysis_id = ANY(${analyses}::uuid[])`;
  const analysesDeleted = await tx.$executeRaw`DELETE FROM analyses WHERE id = ANY(${analyses}::uuid[])`;
  const coverage = await tx.$executeRaw`DELETE FROM coverage_records WHERE entity_id = ${entityId}::uuid`;
  const knowledge = await tx.$executeRaw`DELETE FROM knowledge WHERE entity_id = ${entityId}::uuid`;
  // Records scoped to the entity, with their revisions, citations, receipts, actions and change feed.
  const knowledgeRecords = await tx.$executeRaw`DELETE FROM knowledge_insights WHERE id = ANY(${records}::uuid[])`;
  // Snapshots of its originals (text already cleared) that no remaining record cites; the rest stay as
  // unavailable citations of other scopes' records (a project's).
  await tx.$executeRaw`
    DELETE FROM knowledge_source_revisions s WHERE s.entity_id = ${entityId}::uuid
      AND NOT EXISTS (SELECT 1 FROM knowledge_revision_evidence e WHERE e.source_revision_id = s.id)`;
  await tx.$executeRaw`DELETE FROM opinion_rollups WHERE entity_id = ${entityId}::uuid`;
  await tx.$executeRaw`DELETE FROM opinion_source_rollups WHERE entity_id = ${entityId}::uuid`;
  await tx.$executeRaw`DELETE FROM content_count_deltas WHERE entity_id = ${entityId}::uuid`;
  await tx.$executeRaw`DELETE FROM content_day_deltas WHERE entity_id = ${entityId}::uuid`;
  // Evidence capture runs, actions and executions, tombstones and the scope's change feed go by foreign key
  // and trigger with the entity row.
  await tx.$executeRaw`DELETE FROM entities WHERE id = ${entityId}::uuid`;
  return {
    analyses: analysesDeleted,
    knowledge_records: knowledgeRecords,
    knowledge_items: knowledge,
    skills,
    routines,
    quotes,
    workflow_runs: workflowRuns,
    collection_jobs: collectionJobs,
    note_syncs: noteSyncs,
    coverage_records: coverage,
    share_links: shareLinks,
    detached_entity_ids: detached,
  };
}
