import { type Db, Prisma } from "../../platform/db.js";
import type { Side } from "./schemas.js";

/**
 * The summary's reads, each one statement over precomputed rows: originals per platform and
 * window (index-only on `content_store_entity_seen_idx`), opinion units per entity, window,
 * aspect and side (daily rollups kept by triggers, plus the units of the windows' partial edge
 * days: units carry `seen_at`, the moment of their original, null for originals that are not
 * evidence), a few verbatim quotes per
 * theme (strongest first along `opinion_units_entity_aspect_sentiment_idx`), and the latest
 * coverage per platform. An original's moment is its publication time, else its storage time.
 */
export interface Windows {
  previousStart: Date;
  currentStart: Date;
  end: Date;
}

const seen = Prisma.sql`coalesce(c.published_at, c.created_at)`;

export interface PlatformCountRow {
  platform: string;
  current: boolean;
  sources: number;
  comments: number;
}

/** Every stored original of the entity in the two windows, per platform (all kinds, as stored). */
export function platformCounts(db: Db, entityId: string, w: Windows) {
  return db.$queryRaw<PlatformCountRow[]>`
    SELECT c.platform, (${seen} >= ${w.currentStart}::timestamptz) AS current,
      count(*) FILTER (WHERE c.kind <> 'comment')::int AS sources,
      count(*) FILTER (WHERE c.kind = 'comment')::int AS comments
    FROM content_store c
    WHERE c.entity_id = ${entityId}::uuid AND ${seen} >= ${w.previousStart}::timestamptz AND ${seen} < ${w.end}::timestamptz
    GROUP BY 1, 2`;
}

export interface AspectRow {
  entity_id: string;
  current: boolean;
  /** 0: the window; 1: an aspect; 2: an aspect and a side; 3: an analyser version (aspect = the version). */
  level: 0 | 1 | 2 | 3;
  aspect: string;
  side: string;
  statements: number;
  sources: number;
}

const utcDay = (d: Date) => d.toISOString().slice(0, 10);
const nextDay = (day: string) => new Date(Date.parse(`${day}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10);

/**
 * Opinion units of the entities' evidence originals in the two windows, per level (see the
 * `opinion_rollups` migration), in two parts that never overlap: the daily rollups of the days
 * wholly inside a window, and the units of the partial days at the windows' edges (the first
 * day of the previous window, the day the current one starts, today), counted from the units
 * themselves. An original belongs to one day, so the parts add up to exact distinct counts.
 */
export function aspectCounts(db: Db, entityIds: string[], w: Windows) {
  const previousDay = utcDay(w.previousStart);
  const currentDay = utcDay(w.currentStart);
  const endDay = utcDay(w.end);
  const midnight = (day: string) => `${day}T00:00:00Z`;
  const edge = Prisma.sql`(u.seen_at >= ${w.previousStart}::timestamptz AND u.seen_at < ${midnight(nextDay(previousDay))}::timestamptz)
    OR (u.seen_at >= ${midnight(currentDay)}::timestamptz AND u.seen_at < ${midnight(nextDay(currentDay))}::timestamptz)
    OR (u.seen_at >= ${midnight(endDay)}::timestamptz AND u.seen_at < ${w.end}::timestamptz)`;
  return db.$queryRaw<AspectRow[]>`
    SELECT entity_id, current, level, aspect, side, sum(statements)::int AS statements, sum(sources)::int AS sources
    FROM (
      SELECT r.entity_id, r.day > ${currentDay}::date AS current, r.level, r.aspect, r.side, r.statements, r.sources
      FROM opinion_rollups r
      WHERE r.entity_id = ANY(${entityIds}::uuid[]) AND r.day > ${previousDay}::date AND r.day < ${endDay}::date
        AND r.day <> ${currentDay}::date
      UNION ALL
      SELECT entity_id, current, level, aspect, side, sum(n), count(*)
      FROM (
        SELECT u.entity_id, u.seen_at >= ${w.currentStart}::timestamptz AS current, u.content_id, k.level, k.aspect, k.side, count(*) AS n
        FROM opinion_units u
        CROSS JOIN LATERAL opinion_unit_keys(u.seen_at, u.aspect, u.sentiment_label, u.kind, u.analyser_version) k
        WHERE u.entity_id = ANY(${entityIds}::uuid[]) AND u.seen_at IS NOT NULL AND (${edge})
        GROUP BY 1, 2, 3, 4, 5, 6
      ) edge_units
      GROUP BY 1, 2, 3, 4, 5
    ) parts
    GROUP BY 1, 2, 3, 4, 5`;
}

export interface QuoteTarget {
  entityId: string;
  aspect: string;
  side: Side;
}

export interface QuoteRow {
  target: number;
  id: string;
  content_id: string;
  text: string;
  start_offset: number;
  end_offset: number;
  sentiment: number;
  platform: string;
  url: string;
  author: string;
  published_at: Date | null;
}

const SIDE_CONDITION: Record<Side, Prisma.Sql> = {
  complaint: Prisma.sql`u.kind <> 'request' AND u.sentiment_label = 'negative'`,
  praise: Prisma.sql`u.kind <> 'request' AND u.sentiment_label = 'positive'`,
  request: Prisma.sql`u.kind = 'request'`,
  neutral: Prisma.sql`u.kind <> 'request' AND u.sentiment_label NOT IN ('negative', 'positive')`,
};

/**
 * Candidate quotes of each target (entity, aspect, side) in the current window, strongest first
 * (most negative complaints, most positive praise), read along the (entity, aspect, sentiment)
 * index. Only units whose text is still exactly the original's slice at their offsets qualify,
 * so every quote is verbatim.
 */
export function quoteCandidates(db: Db, targets: QuoteTarget[], w: Windows, perTarget: number) {
  if (targets.length === 0) return Promise.resolve([] as QuoteRow[]);
  // Candidates are read along the index first (strongest first, a few more than needed), then
  // checked against their originals: a join would let the planner read every unit of the aspect.
  const parts = targets.map(
    (t, i) => Prisma.sql`(
      SELECT ${i}::int AS target, u.id, u.content_id, u.text, u.start_offset, u.end_offset, u.sentiment,
        c.platform, c.url, c.author, c.published_at
      FROM (
        SELECT u.id, u.content_id, u.text, u.start_offset, u.end_offset, u.sentiment
        FROM opinion_units u
        WHERE u.entity_id = ${t.entityId}::uuid AND u.aspect = ${t.aspect} AND ${SIDE_CONDITION[t.side]}
          AND u.seen_at >= ${w.currentStart}::timestamptz AND u.seen_at < ${w.end}::timestamptz
        ORDER BY u.sentiment ${t.side === "praise" ? Prisma.sql`DESC` : Prisma.sql`ASC`}
        LIMIT ${perTarget * 4}
      ) u JOIN content_store c ON c.id = u.content_id
      WHERE substr(c.content, u.start_offset + 1, u.end_offset - u.start_offset) = u.text
      ORDER BY u.sentiment ${t.side === "praise" ? Prisma.sql`DESC` : Prisma.sql`ASC`}, u.id
      LIMIT ${perTarget})`,
  );
  return db.$queryRaw<QuoteRow[]>`${Prisma.join(parts, " UNION ALL ")}`;
}

export interface CoverageRow {
  collector: string;
  coverage_state: string;
  run_id: string;
  collection_scope: string;
  query: string | null;
  started_at: string | null;
  finished_at: string | null;
  updated_at: Date;
  targets: number;
  targets_read_to_end: number;
  items_found: number;
  items_stored: number;
}

/** The latest coverage record of each platform of the entity, with what its targets covered. */
export function latestCoverage(db: Db, entityId: string) {
  return db.$queryRaw<CoverageRow[]>`
    WITH latest AS (
      SELECT DISTINCT ON (collector) id, collector, coverage_state, run_id, collection_scope, query, started_at, finished_at, updated_at
      FROM coverage_records WHERE entity_id = ${entityId}::uuid
      ORDER BY collector, updated_at DESC, created_at DESC, id DESC
    )
    SELECT l.collector, l.coverage_state, l.run_id, l.collection_scope, l.query, l.started_at, l.finished_at, l.updated_at,
      count(t.id)::int AS targets, count(t.id) FILTER (WHERE t.reached_end)::int AS targets_read_to_end,
      coalesce(sum(t.items_found), 0)::int AS items_found, coalesce(sum(t.items_stored), 0)::int AS items_stored
    FROM latest l LEFT JOIN coverage_targets t ON t.coverage_record_id = l.id
    GROUP BY l.collector, l.coverage_state, l.run_id, l.collection_scope, l.query, l.started_at, l.finished_at, l.updated_at
    ORDER BY l.collector`;
}
