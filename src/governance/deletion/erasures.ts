import { isUuid, requireRole } from "../../access/workspaces/access.js";
import { audit } from "../../access/workspaces/audit.js";
import { authorHash, erasureKey, keyMissing, lockErasures, normaliseAuthor } from "../../intake/ingest/erased-authors.js";
import { jobIds } from "../../jobs/ids.js";
import type { DbTx } from "../../platform/db.js";
import type { AppDeps } from "../../platform/deps.js";
import { notFound } from "../../platform/errors.js";
import { runErasure } from "./erasure-run.js";
import type { ErasureInput, ErasureRecord } from "./schemas.js";

/**
 * `POST /api/workspaces/{workspace_id}/erasures` (admins): forget an author on a platform of the
 * workspace. One transaction, under the workspace's erasure lock (which every ingest takes shared),
 * records the erasure (an HMAC of the handle, never the handle) and lists the author's stored
 * originals by every stored spelling of the handle; from its commit on, new items of the author are
 * skipped. The originals are then deleted with their comments in batches (erasure-run.ts): within the
 * request when there are at most ERASURE_SYNC_LIMIT (200, completed), else by a job (202, poll
 * `next`). The same author again answers the same erasure, resumed if it had not finished.
 */
export type ErasureDeps = Pick<AppDeps, "db" | "queues" | "config">;

interface Row {
  id: string;
  workspaceId: string;
  platform: string;
  status: string;
  requestedBy: string | null;
  originalsMatched: number;
  rowsDeleted: number;
  opinionUnitsDeleted: number;
  analysesUpdated: number;
  knowledgeCitationsCleared: number;
  batches: number;
  error: string | null;
  createdAt: Date;
  updatedAt: Date;
  finishedAt: Date | null;
}

export const erasurePath = (workspaceId: string, erasureId: string) => `/api/workspaces/${workspaceId}/erasures/${erasureId}`;

function toRecord(row: Row, remaining: number): ErasureRecord {
  return {
    id: row.id,
    workspace_id: row.workspaceId,
    platform: row.platform,
    status: row.status as ErasureRecord["status"],
    requested_by: row.requestedBy,
    progress: {
      originals_matched: row.originalsMatched,
      remaining,
      rows_deleted: row.rowsDeleted,
      opinion_units_deleted: row.opinionUnitsDeleted,
      analyses_updated: row.analysesUpdated,
      knowledge_citations_cleared: row.knowledgeCitationsCleared,
      batches: row.batches,
    },
    error: row.error,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
    finished_at: row.finishedAt?.toISOString() ?? null,
    next: erasurePath(row.workspaceId, row.id),
  };
}

async function remainingOf(db: ErasureDeps["db"], ids: string[]): Promise<Map<string, number>> {
  if (ids.length === 0) return new Map();
  const rows = await db.authorErasureItem.groupBy({ by: ["erasureId"], where: { erasureId: { in: ids } }, _count: { _all: true } });
  return new Map(rows.map((r) => [r.erasureId, r._count._all]));
}

async function readRecord(db: ErasureDeps["db"], erasureId: string): Promise<ErasureRecord> {
  const row = await db.authorErasure.findUniqueOrThrow({ where: { id: erasureId } });
  return toRecord(row, (await remainingOf(db, [erasureId])).get(erasureId) ?? 0);
}

/** Records (or finds) the erasure and lists the author's originals still stored; answers its id. */
async function record(tx: DbTx, userId: string, workspaceId: string, input: ErasureInput, hash: string, keyId: string): Promise<string> {
  await lockErasures(tx, workspaceId);
  const created = await tx.$queryRaw<{ id: string }[]>`
    INSERT INTO author_erasures (id, workspace_id, platform, author_hash, hash_key_id, requested_by)
    VALUES (gen_random_uuid(), ${workspaceId}::uuid, ${input.platform}, ${hash}, ${keyId}, ${userId}::uuid)
    ON CONFLICT (workspace_id, platform, author_hash) DO NOTHING
    RETURNING id`;
  const id =
    created[0]?.id ??
    (
      await tx.authorErasure.findUniqueOrThrow({
        where: { workspaceId_platform_authorHash: { workspaceId, platform: input.platform, authorHash: hash } },
      })
    ).id;
  // Every stored spelling of the handle ("Alice", "alice "): compared as normalised here, not in SQL.
  const wanted = normaliseAuthor(input.author);
  const stored = await tx.$queryRaw<{ author: string }[]>`
    SELECT DISTINCT author FROM content_store WHERE workspace_id = ${workspaceId}::uuid AND platform = ${input.platform}`;
  const spellings = stored.map((r) => r.author).filter((a) => normaliseAuthor(a) === wanted);
  const found =
    spellings.length === 0
      ? 0
      : await tx.$executeRaw`
          INSERT INTO author_erasure_items (erasure_id, content_id)
          SELECT ${id}::uuid, id FROM content_store
          WHERE workspace_id = ${workspaceId}::uuid AND platform = ${input.platform} AND author = ANY(${spellings}::text[])
          ON CONFLICT DO NOTHING`;
  if (created[0]) {
    await tx.$executeRaw`UPDATE author_erasures SET originals_matched = ${found} WHERE id = ${id}::uuid`;
    await audit(tx, workspaceId, userId, "author.erasure_requested", id, {
      erasure_id: id,
      platform: input.platform,
      originals_matched: found,
    });
  } else {
    // Asked again: anything found now is added, and an erasure that stopped (failed) runs again.
    await tx.$executeRaw`
      UPDATE author_erasures SET originals_matched = originals_matched + ${found},
        status = CASE WHEN ${found} > 0 OR status = 'failed' THEN 'running' ELSE status END,
        finished_at = CASE WHEN ${found} > 0 OR status = 'failed' THEN NULL ELSE finished_at END,
        error = CASE WHEN ${found} > 0 OR status = 'failed' THEN NULL ELSE error END, updated_at = clock_timestamp()
      WHERE id = ${id}::uuid`;
  }
  return id;
}

export async function requestErasure(
  deps: ErasureDeps,
  userId: string,
  workspaceId: string,
  input: ErasureInput,
): Promise<{ finished: boolean; body: ErasureRecord }> {
  await requireRole(deps.db, userId, workspaceId, "admin", "erase an author");
  const key = erasureKey(deps.config);
  if (!key) throw keyMissing();
  const hash = authorHash(key, workspaceId, input.platform, input.author);
  const id = await deps.db.$transaction((tx) => record(tx, userId, workspaceId, input, hash, key.id), {
    maxWait: 10_000,
    timeout: 120_000,
  });

  const current = await readRecord(deps.db, id);
  if (current.status === "running") {
    if (current.progress.remaining <= deps.config.ERASURE_SYNC_LIMIT) {
      await runErasure(deps.db, id, deps.config.ERASURE_BATCH_SIZE);
    } else {
      await deps.queues.enqueue("erasure.run.v1", { erasureId: id }, { jobId: jobIds.erasure(id) });
    }
  }
  const body = await readRecord(deps.db, id);
  return { finished: body.status !== "running", body };
}

export async function readErasure(deps: Pick<AppDeps, "db">, userId: string, workspaceId: string, erasureId: string) {
  await requireRole(deps.db, userId, workspaceId, "admin", "read author erasures");
  const row = isUuid(erasureId) ? await deps.db.authorErasure.findFirst({ where: { id: erasureId, workspaceId } }) : null;
  if (!row) throw notFound("Erasure");
  return toRecord(row, (await remainingOf(deps.db, [row.id])).get(row.id) ?? 0);
}

export async function listErasures(deps: Pick<AppDeps, "db">, userId: string, workspaceId: string, limit: number) {
  await requireRole(deps.db, userId, workspaceId, "admin", "read author erasures");
  const rows = await deps.db.authorErasure.findMany({
    where: { workspaceId },
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
    take: limit,
  });
  const remaining = await remainingOf(
    deps.db,
    rows.map((r) => r.id),
  );
  const erasures = rows.map((r) => toRecord(r, remaining.get(r.id) ?? 0));
  return { workspace_id: workspaceId, erasures, count: erasures.length };
}
