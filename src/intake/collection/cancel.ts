import { writableEntityForUser } from "../../access/workspaces/access.js";
import { assertCancelled, cancelJob } from "../../jobs/lifecycle.js";
import type { AppDeps } from "../../platform/deps.js";
import { removalsOfRun } from "../coverage/removals.js";
import type { JobStatusResponse } from "./schemas.js";
import { describeJob, findJobForUser } from "./status.js";

type Deps = Pick<AppDeps, "db" | "pool" | "queues" | "redis" | "config" | "logger" | "reads">;

/**
 * Cancels a collection job the caller can see, whoever started it: editors and above of the
 * entity's workspace may (a viewer gets 403 `forbidden` before anything changes). A queued job
 * leaves the queue; a running one stops at its next page. What it stored before stays.
 * Cancelling twice answers the same; a finished job is a 409.
 */
export async function cancelCollectionJob(deps: Deps, userId: string, jobId: string): Promise<JobStatusResponse> {
  const row = await findJobForUser(deps, userId, jobId);
  await writableEntityForUser(deps.db, userId, row.entityId, "cancel collection and research jobs");
  assertCancelled("collection_job", await cancelJobRow(deps, row));
  const fresh = await deps.db.collectionJob.findUniqueOrThrow({ where: { id: row.id } });
  return describeJob(deps.config, fresh, null, await removalsOfRun(deps.db, fresh.entityId, fresh.id));
}

/** The cancel transition of one collection job, its queue entry and its end event. */
export async function cancelJobRow(
  deps: Deps,
  row: { id: string; queueJobId: string; entityId: string; analysisId: string | null },
  detail?: string,
): Promise<{ changed: boolean; status: string | undefined }> {
  return cancelJob(deps, {
    kind: "collection_job",
    id: row.id,
    detail,
    entry: { queue: deps.queues.get("collection"), id: row.queueJobId },
    data: { entity_id: row.entityId, analysis_id: row.analysisId },
  });
}
