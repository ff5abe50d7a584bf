import type pg from "pg";
import { jobIds } from "../../jobs/ids.js";
import { queueInPages } from "../../jobs/walk.js";
import { poolTransaction } from "../../platform/db.js";
import type { AppDeps } from "../../platform/deps.js";
import { type Analyser, analyseInline } from "./analyse.js";
import { ANALYSER_VERSION } from "./opinions.js";
import {
  analysisInput,
  ENRICH_CHUNK,
  insertUnits,
  labelsColumn,
  lockForUnits,
  STATEMENT_TIMEOUT_MS,
  storedConfidence,
  unitsToWrite,
} from "./service.js";

/**
 * Re-analysis of originals already enriched, after the analyser changed (a new `ANALYSER_VERSION`: other
 * units, other feedback kinds). Enrichment analyses a row once; analyses read the stored units of the current
 * version and recompute the others for their sample only, and counts over a whole scope read the stored units
 * whatever their version. This brings the stored units and kinds up to the current analyser, row by row,
 * behind the enrichment of new rows (its jobs have a lower priority on the same queue).
 *
 * A row's old units are deleted and its new ones inserted in one transaction, so the roll-ups the units'
 * triggers keep (opinion_rollups, opinion_source_rollups) take the old contributions away and add the new
 * ones, and a reader sees the one set or the other. A new unit with the span of an old one keeps its id. The
 * embedding is not touched (enrichment re-embeds when the embedding model changes).
 */
export interface ReanalysisResult {
  requested: number;
  reanalysed: number;
  /** Rows whose stored units are all of the current analyser (or a newer one): left as they are. */
  current: number;
  /** Rows not enriched yet: enrichment will analyse them. */
  notEnriched: number;
  /** Ids with no stored row (deleted since they were queued). */
  missing: number;
  unitsRemoved: number;
  unitsInserted: number;
}

interface StoredRow {
  id: string;
  entityId: string;
  title: string;
  content: string;
  enriched: boolean;
  labels: unknown;
  units: number;
  olderUnits: number;
}

export async function reanalyseContent(
  pool: pg.Pool,
  contentIds: string[],
  analyse: Analyser = analyseInline,
  chunkRows = ENRICH_CHUNK,
): Promise<ReanalysisResult> {
  const ids = [...new Set(contentIds)];
  const result: ReanalysisResult = {
    requested: ids.length,
    reanalysed: 0,
    current: 0,
    notEnriched: 0,
    missing: 0,
    unitsRemoved: 0,
    unitsInserted: 0,
  };
  for (let i = 0; i < ids.length; i += chunkRows) {
    const chunk = ids.slice(i, i + chunkRows);
    const { rows } = await pool.query<StoredRow>(
      `SELECT c.id, c.entity_id AS "entityId", c.title, c.content, e.enriched_at IS NOT NULL AS enriched, ${labelsColumn("c.")},
         u.units, u.older AS "olderUnits"
       FROM content_store c
         LEFT JOIN content_enrichment e ON e.content_id = c.id
         CROSS JOIN LATERAL (SELECT count(*)::int AS units, count(*) FILTER (WHERE o.analyser_version < $2)::int AS older
                             FROM opinion_units o WHERE o.content_id = c.id) u
       WHERE c.id = ANY($1::uuid[])`,
      [chunk, ANALYSER_VERSION],
    );
    result.missing += chunk.length - rows.length;
    const enriched = rows.filter((r) => r.enriched);
    result.notEnriched += rows.length - enriched.length;
    // A row without units is analysed again: the current analyser may find what an older one did not. Units
    // of a newer analyser (a worker not yet upgraded, during a rolling deploy) are left alone.
    const todo = enriched.filter((r) => r.units === 0 || r.olderUnits > 0);
    result.current += enriched.length - todo.length;
    if (todo.length === 0) continue;

    const analysed = await analyse(todo.map(analysisInput));
    const units = unitsToWrite(todo, analysed);

    await poolTransaction(pool, STATEMENT_TIMEOUT_MS, async (client) => {
      // Locked as enrichment locks them; a row deleted meanwhile gets no units back.
      const present = await lockForUnits(
        client,
        todo.map((r) => r.id),
        true,
      );
      const rowsKept = todo.flatMap((row, index) => (present.has(row.id) ? [{ row, reading: analysed[index]!.kind }] : []));
      result.missing += todo.length - rowsKept.length;
      if (rowsKept.length === 0) return;
      const keptIds = rowsKept.map((k) => k.row.id);
      const removed = await client.query<{ id: string; contentId: string; startOffset: number; endOffset: number }>(
        `DELETE FROM opinion_units WHERE content_id = ANY($1::uuid[])
         RETURNING id, content_id AS "contentId", start_offset AS "startOffset", end_offset AS "endOffset"`,
        [keptIds],
      );
      result.unitsRemoved += removed.rows.length;
      const idOf = new Map(removed.rows.map((u) => [`${u.contentId}:${u.startOffset}:${u.endOffset}`, u.id]));
      const kept = units
        .filter((u) => present.has(u.contentId))
        .map((u) => ({ ...u, id: idOf.get(`${u.contentId}:${u.startOffset}:${u.endOffset}`) ?? u.id }));
      await client.query(
        `UPDATE content_enrichment e SET feedback_kind = u.kind, feedback_kind_confidence = u.confidence
         FROM unnest($1::uuid[], $2::text[], $3::real[]) AS u(id, kind, confidence)
         WHERE e.content_id = u.id`,
        [keptIds, rowsKept.map((k) => k.reading.kind), rowsKept.map((k) => storedConfidence(k.reading.confidence))],
      );
      if (kept.length > 0) result.unitsInserted += await insertUnits(client, kept, present);
      result.reanalysed += rowsKept.length;
    });
  }
  return result;
}

/** Ids a re-analysis job carries (the job catalog's bound is 5,000). */
export const REANALYSIS_JOB_ROWS = 1000;

/**
 * Operator command after a deploy that changed the analyser: queues re-analysis for every enriched row (of
 * one entity, or all) that has units of an older analyser version or none, walking the rows in id order. The
 * jobs run behind new rows' enrichment. Answers what it queued; a queue failure stops it with the error, and
 * running it again queues what is still stale.
 */
export async function queueReanalysis(deps: Pick<AppDeps, "db" | "queues">, entityId?: string): Promise<string> {
  const stamp = Date.now().toString(36);
  const { rows, jobs } = await queueInPages(
    async (after) =>
      // One index probe per row for each test: as `NOT EXISTS … OR EXISTS …` the planner hashed every unit
      // of the table for every page (a full scan of opinion_units, twice, per 1,000 rows).
      (
        await deps.db.$queryRaw<{ id: string }[]>`
          SELECT e.content_id AS id FROM content_enrichment e
            LEFT JOIN LATERAL (SELECT true AS found FROM opinion_units u WHERE u.content_id = e.content_id LIMIT 1) anyu ON true
            LEFT JOIN LATERAL (SELECT true AS found FROM opinion_units u
                               WHERE u.content_id = e.content_id AND u.analyser_version < ${ANALYSER_VERSION} LIMIT 1) older ON true
          WHERE e.enriched_at IS NOT NULL AND e.content_id > ${after}::uuid
            AND (${entityId ?? null}::uuid IS NULL OR e.entity_id = ${entityId ?? null}::uuid)
            AND (anyu.found IS NULL OR older.found)
          ORDER BY e.content_id LIMIT ${REANALYSIS_JOB_ROWS}`
      ).map((r) => r.id),
    (ids) => deps.queues.enqueue("enrichment.reanalyse.v1", { contentIds: ids }, { jobId: jobIds.reanalysis(stamp, ids) }),
  );
  return `queued ${rows} row(s) for re-analysis by analyser version ${ANALYSER_VERSION} in ${jobs} job(s)${entityId ? ` for entity ${entityId}` : ""}`;
}
