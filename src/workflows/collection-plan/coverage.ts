import type { Db } from "../../platform/db.js";

/** The latest coverage record of each platform of one entity, with its targets (what the plan resumes from). */
export interface LatestRecord {
  id: string;
  collector: string;
  coverageState: string;
  runId: string;
  collectionScope: string;
  query: string | null;
  startedAt: string | null;
  finishedAt: string | null;
  updatedAt: Date;
  targets: {
    target: string;
    targetType: string;
    status: string;
    itemsFound: number;
    itemsStored: number;
    cursorStart: string | null;
    cursorEnd: string | null;
    reachedEnd: boolean | null;
    error: string | null;
  }[];
}

export async function latestRecords(db: Db, entityId: string, platforms: string[]): Promise<Map<string, LatestRecord>> {
  if (platforms.length === 0) return new Map();
  const records = await db.$queryRaw<Omit<LatestRecord, "targets">[]>`
    SELECT DISTINCT ON (collector)
      id, collector, coverage_state AS "coverageState", run_id AS "runId", collection_scope AS "collectionScope", query,
      started_at AS "startedAt", finished_at AS "finishedAt", updated_at AS "updatedAt"
    FROM coverage_records
    WHERE entity_id = ${entityId}::uuid AND collector = ANY(${platforms}::text[])
    ORDER BY collector, updated_at DESC, created_at DESC, id DESC`;
  const targets =
    records.length === 0
      ? []
      : await db.coverageTarget.findMany({
          where: { coverageRecordId: { in: records.map((r) => r.id) } },
          orderBy: [{ coverageRecordId: "asc" }, { position: "asc" }],
        });
  return new Map(
    records.map((r) => [
      r.collector,
      {
        ...r,
        targets: targets
          .filter((t) => t.coverageRecordId === r.id)
          .map((t) => ({
            target: t.target,
            targetType: t.targetType,
            status: t.status,
            itemsFound: t.itemsFound,
            itemsStored: t.itemsStored,
            cursorStart: t.cursorStart,
            cursorEnd: t.cursorEnd,
            reachedEnd: t.reachedEnd,
            error: t.error,
          })),
      },
    ]),
  );
}
