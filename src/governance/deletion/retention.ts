import { requireRole } from "../../access/workspaces/access.js";
import { audit } from "../../access/workspaces/audit.js";
import type { Db } from "../../platform/db.js";
import type { AppDeps } from "../../platform/deps.js";
import { notFound } from "../../platform/errors.js";
import { deleteOriginals, emptyCounts, retryingTransaction } from "./cascade.js";
import { type Pace, restAfter } from "./pace.js";
import { purgeDueWorkspaces } from "./purge.js";
import type { RetentionReport, WorkspaceSettingsInput, WorkspaceState } from "./schemas.js";
import { toWorkspaceState } from "./workspaces.js";

/**
 * Retention: a workspace keeps its stored originals `retention_days` days (null: forever), counted from
 * when each was stored (`content_store.created_at`), not from its publication time: what the service
 * holds, and for how long, is what the setting limits, and many originals have no publication time.
 * A scheduled pass (`retention.tick.v1`, every RETENTION_INTERVAL_MS) deletes what is older through the
 * cascade (cascade.ts) with reason `retention`, RETENTION_BATCH_SIZE originals per transaction; each
 * batch adds to the workspace's `retention_states` row in its own transaction, so a pass that stopped
 * left its counts true and the next pass goes on. A pass that removed something writes the audit entry
 * `content.retention_removed` with its totals.
 */
type Deps = AppDeps;

/** `PATCH /api/workspaces/{workspace_id}` (admins): sets `retention_days`; audited. */
export async function updateWorkspaceSettings(
  deps: Deps,
  userId: string,
  workspaceId: string,
  input: WorkspaceSettingsInput,
): Promise<WorkspaceState> {
  const role = await requireRole(deps.db, userId, workspaceId, "admin", "change the workspace's settings");
  const row = await deps.db.$transaction(async (tx) => {
    const [before] = await tx.$queryRaw<{ retention_days: number | null }[]>`
      SELECT retention_days FROM workspaces WHERE id = ${workspaceId}::uuid AND state = 'active' FOR UPDATE`;
    if (!before) throw notFound("Workspace");
    const updated = await tx.workspace.update({ where: { id: workspaceId }, data: { retentionDays: input.retention_days } });
    if (before.retention_days !== input.retention_days) {
      await audit(tx, workspaceId, userId, "workspace.retention_changed", workspaceId, {
        retention_days: input.retention_days,
        previous: before.retention_days,
      });
    }
    return updated;
  });
  return toWorkspaceState(
    {
      id: row.id,
      name: row.name,
      personal: row.personal,
      created_at: row.createdAt,
      state: row.state,
      retention_days: row.retentionDays,
      deletion_requested_at: row.deletionRequestedAt,
      deletion_requested_by: row.deletionRequestedBy,
      purge_after: row.purgeAfter,
    },
    role,
  );
}

/** `GET /api/workspaces/{workspace_id}/retention` (admins). */
export async function readRetention(deps: Deps, userId: string, workspaceId: string): Promise<RetentionReport> {
  await requireRole(deps.db, userId, workspaceId, "admin", "read the retention report");
  const [row] = await deps.db.$queryRaw<
    {
      retention_days: number | null;
      last_pass_at: Date | null;
      last_cutoff: Date | null;
      removed_last_pass: number | null;
      removed_total: bigint | null;
      passes: number | null;
    }[]
  >`
    SELECT w.retention_days, r.last_pass_at, r.last_cutoff, r.removed_last_pass, r.removed_total, r.passes
    FROM workspaces w LEFT JOIN retention_states r ON r.workspace_id = w.id WHERE w.id = ${workspaceId}::uuid`;
  return {
    workspace_id: workspaceId,
    retention_days: row?.retention_days ?? null,
    last_pass_at: row?.last_pass_at?.toISOString() ?? null,
    last_cutoff: row?.last_cutoff?.toISOString() ?? null,
    removed_last_pass: row?.removed_last_pass ?? 0,
    removed_total: Number(row?.removed_total ?? 0),
    passes: row?.passes ?? 0,
  };
}

/** One scheduled pass: purge deleted workspaces that are due, then apply every workspace's retention. */
export async function runScheduledPass(deps: Deps): Promise<{ purged: number; workspaces: number; removed: number }> {
  const batchSize = deps.config.RETENTION_BATCH_SIZE;
  const purged = await purgeDueWorkspaces(deps, batchSize);
  const { workspaces, removed } = await runRetentionPass(deps, batchSize);
  return { purged: purged.length, workspaces, removed };
}

/** Applies retention in every active workspace that has a setting; answers how many rows went. */
export async function runRetentionPass(deps: Deps, batchSize: number): Promise<{ workspaces: number; removed: number }> {
  const rows = await deps.db.$queryRaw<{ id: string }[]>`
    SELECT id FROM workspaces WHERE retention_days IS NOT NULL AND state = 'active' ORDER BY id`;
  let removed = 0;
  const pace = { factor: deps.config.DELETION_PAUSE_FACTOR };
  for (const { id } of rows) removed += await applyRetention(deps.db, id, batchSize, pace);
  return { workspaces: rows.length, removed };
}

/**
 * A pass holds its workspace while its batches renew `pass_heartbeat_at`; another pass (a tick that came
 * while this one was still running) leaves the workspace alone, and takes it over only once no batch has
 * renewed the hold for this long (a pass that stopped midway).
 */
export const RETENTION_LEASE_SECONDS = 300;

interface PassStart {
  cutoff: Date;
  retention_days: number;
}

/**
 * Starts a pass over one workspace, or answers null when it has no retention setting, is not active or
 * another pass holds it. A pass that stopped midway (held, its lease lapsed) and had removed rows gets its
 * audit entry now, marked `stopped`, so every removal is in some `content.retention_removed` entry.
 */
async function startPass(db: Db, workspaceId: string): Promise<PassStart | null> {
  return db.$transaction(async (tx) => {
    const [settings] = await tx.$queryRaw<{ retention_days: number }[]>`
      SELECT retention_days FROM workspaces WHERE id = ${workspaceId}::uuid AND state = 'active' AND retention_days IS NOT NULL`;
    if (!settings) return null;
    await tx.$executeRaw`INSERT INTO retention_states (workspace_id) VALUES (${workspaceId}::uuid) ON CONFLICT DO NOTHING`;
    const [state] = await tx.$queryRaw<{ pass_started_at: Date | null; pass_cutoff: Date | null; pass_removed: number; held: boolean }[]>`
      SELECT pass_started_at, pass_cutoff, pass_removed,
        pass_heartbeat_at IS NOT NULL AND pass_heartbeat_at > now() - make_interval(secs => ${RETENTION_LEASE_SECONDS}) AS held
      FROM retention_states WHERE workspace_id = ${workspaceId}::uuid FOR UPDATE`;
    if (!state || state.held) return null;
    if (state.pass_started_at && state.pass_removed > 0) {
      await audit(tx, workspaceId, null, "content.retention_removed", workspaceId, {
        retention_days: settings.retention_days,
        cutoff: state.pass_cutoff?.toISOString() ?? null,
        rows: state.pass_removed,
        stopped: true,
        started_at: state.pass_started_at.toISOString(),
      });
    }
    const [start] = await tx.$queryRaw<{ cutoff: Date }[]>`
      UPDATE retention_states SET pass_started_at = now(), pass_heartbeat_at = now(),
        pass_cutoff = now() - make_interval(days => ${settings.retention_days}), pass_removed = 0
      WHERE workspace_id = ${workspaceId}::uuid RETURNING pass_cutoff AS cutoff`;
    return start ? { cutoff: start.cutoff, retention_days: settings.retention_days } : null;
  });
}

/** One workspace's pass: answers the content rows (originals and comments below them) it deleted. */
export async function applyRetention(db: Db, workspaceId: string, batchSize: number, pace: Pace = { factor: 0 }): Promise<number> {
  const start = await startPass(db, workspaceId);
  if (!start) return 0;
  const totals = emptyCounts();
  try {
    for (;;) {
      const started = performance.now();
      const batch = await retentionBatch(db, workspaceId, start.cutoff, batchSize);
      if (!batch) break;
      for (const key of Object.keys(totals) as (keyof typeof totals)[]) totals[key] += batch[key];
      await restAfter(pace, performance.now() - started);
    }
  } catch (err) {
    // A batch failed: the hold is released at once (the pass stays marked started, so the next one audits
    // what this one removed); a process that died instead releases it when the lease lapses.
    await db.$executeRaw`UPDATE retention_states SET pass_heartbeat_at = NULL WHERE workspace_id = ${workspaceId}::uuid`.catch(
      () => undefined,
    );
    throw err;
  }
  await db.$transaction(async (tx) => {
    await tx.$executeRaw`
      UPDATE retention_states SET last_pass_at = now(), last_cutoff = pass_cutoff, removed_last_pass = pass_removed,
        passes = passes + 1, pass_started_at = NULL, pass_heartbeat_at = NULL
      WHERE workspace_id = ${workspaceId}::uuid`;
    if (totals.rows > 0) {
      await audit(tx, workspaceId, null, "content.retention_removed", workspaceId, {
        retention_days: start.retention_days,
        cutoff: start.cutoff.toISOString(),
        ...totals,
      });
    }
  });
  return totals.rows;
}

/** One transaction: up to `batchSize` originals stored before the cutoff, with everything below them (null: none left). */
async function retentionBatch(db: Db, workspaceId: string, cutoff: Date, batchSize: number) {
  return retryingTransaction(db, async (tx) => {
    // Share-locked: a deletion request (which takes the row for update) waits for this batch, and a
    // workspace being deleted gets no further retention batches.
    const [live] = await tx.$queryRaw<{ id: string }[]>`
            SELECT id FROM workspaces WHERE id = ${workspaceId}::uuid AND state = 'active' FOR SHARE`;
    if (!live) return null;
    const ids = await tx.$queryRaw<{ id: string }[]>`
            SELECT id FROM content_store WHERE workspace_id = ${workspaceId}::uuid AND created_at < ${cutoff}
            ORDER BY created_at, id LIMIT ${batchSize}`;
    if (ids.length === 0) return null;
    const { counts } = await deleteOriginals(tx, {
      workspaceId,
      rootIds: ids.map((r) => r.id),
      reason: "retention",
      actorId: null,
      erasureId: null,
    });
    await tx.$executeRaw`
            UPDATE retention_states SET pass_removed = pass_removed + ${counts.rows}, removed_total = removed_total + ${counts.rows},
              pass_heartbeat_at = clock_timestamp()
            WHERE workspace_id = ${workspaceId}::uuid`;
    return counts;
  });
}
