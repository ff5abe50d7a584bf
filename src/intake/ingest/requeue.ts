import { isUuid } from "../../access/workspaces/access.js";
import { jobIds } from "../../jobs/ids.js";
import { queueInPages } from "../../jobs/walk.js";
import type { AppDeps } from "../../platform/deps.js";
import { ENRICHMENT_CHUNK } from "./service.js";

/**
 * Operator recovery: queues enrichment again for stored rows that have none yet (their
 * enqueue failed after commit, or their job was lost with Redis). Walks the rows in id
 * order in chunks; a queue failure stops the command with the error.
 */
export async function requeueUnenriched(deps: Pick<AppDeps, "db" | "queues">, entityId?: string): Promise<string> {
  if (entityId !== undefined && !isUuid(entityId)) throw new Error("usage: requeue-enrichment [entity_id]");
  const stamp = Date.now().toString(36);
  const { rows, jobs } = await queueInPages(
    async (after) =>
      (
        await deps.db.$queryRaw<{ id: string }[]>`
          SELECT c.id FROM content_store c LEFT JOIN content_enrichment e ON e.content_id = c.id
          WHERE e.enriched_at IS NULL AND c.id > ${after}::uuid
            AND (${entityId ?? null}::uuid IS NULL OR c.entity_id = ${entityId ?? null}::uuid)
          ORDER BY c.id LIMIT ${ENRICHMENT_CHUNK}`
      ).map((r) => r.id),
    (ids) => deps.queues.enqueue("enrichment.content.v1", { contentIds: ids }, { jobId: jobIds.enrichmentRequeue(stamp, ids) }),
  );
  return `queued ${rows} unenriched row(s) in ${jobs} enrichment job(s)${entityId ? ` for entity ${entityId}` : ""}`;
}
