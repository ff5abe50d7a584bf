import type { Db } from "../../src/platform/db.js";

/**
 * The units' roll-ups as stored, and as a recount from the units themselves would make them: equal after
 * every kind of change when the triggers keep them exact. Keys are joined by "|".
 */
export const recountDaily = (db: Db) =>
  db.$queryRaw<{ key: string; statements: number; sources: number }[]>`
    SELECT concat_ws('|', u.entity_id, k.day, k.level, k.aspect, k.side) AS key, count(*)::int AS statements,
      count(DISTINCT u.content_id)::int AS sources
    FROM opinion_units u CROSS JOIN LATERAL opinion_unit_keys(u.seen_at, u.aspect, u.sentiment_label, u.kind, u.analyser_version) k
    GROUP BY 1 ORDER BY 1`;

export const storedDaily = (db: Db) =>
  db.$queryRaw<{ key: string; statements: number; sources: number }[]>`
    SELECT concat_ws('|', entity_id, day, level, aspect, side) AS key, statements, sources
    FROM opinion_rollups WHERE statements <> 0 OR sources <> 0 ORDER BY 1`;

/** The source roll-ups (opinion_source_rollups) recounted: each original once per (focus, aspect), by its sides. */
export const recountSources = (db: Db) =>
  db.$queryRaw<{ key: string; sources: number }[]>`
    SELECT concat_ws('|', entity_id, focus, name, sides) AS key, count(*)::int AS sources
    FROM (SELECT u.content_id, u.entity_id, k.focus, k.name,
            (bool_or(k.complaint)::int + 2 * bool_or(k.praise)::int + 4 * bool_or(k.request)::int)::smallint AS sides
          FROM opinion_units u
            CROSS JOIN LATERAL opinion_source_keys(u.seen_at, u.aspect, u.terms, u.kind, u.sentiment_label, u.compared_with, u.churn) k
          GROUP BY u.content_id, u.entity_id, k.focus, k.name) per_original
    GROUP BY 1 ORDER BY 1`;

export const storedSources = (db: Db) =>
  db.$queryRaw<{ key: string; sources: number }[]>`
    SELECT concat_ws('|', entity_id, focus, aspect, sides) AS key, sources
    FROM opinion_source_rollups WHERE sources <> 0 ORDER BY 1`;
