import { type Db, Prisma } from "../../platform/db.js";
import type { Side } from "./schemas.js";

/**
 * The summary's reads, each one statement over precomputed rows: originals per platform and
 * window (per-day deltas, and the rows of the days the windows cut), opinion units per entity, window,
 * aspect and side (daily rollups kept by triggers, plus the units of the windows' partial edge
 * days: units carry `seen_at`, the moment of their original, null for originals that are not
 * evidence), a few verbatim quotes per
 * theme (strongest first along `opinion_units_entity_aspect_strength_idx`, index-only), and the latest
 * coverage per platform. An original's moment is its publication time, else its storage time.
 */
export interface Windows {
  previousStart: Date;
  currentStart: Date;
  end: Date;
}

const seen = Prisma.sql`coalesce(c.published_at, c.created_at)`;

const DAY_MS = 86_400_000;
const utcDay = (d: Date) => d.toISOString().slice(0, 10);
const midnight = (day: string) => new Date(`${day}T00:00:00Z`);
/** The UTC days a window pair starts and ends in: the previous window's first day, the current one's, today. */
const cutDays = (w: Windows) => ({ previousDay: utcDay(w.previousStart), currentDay: utcDay(w.currentStart), endDay: utcDay(w.end) });

export interface PlatformCountRow {
  platform: string;
  current: boolean;
  sources: number;
  comments: number;
}

/**
 * Every stored original of the entity in the two windows, per platform (all kinds, as stored): the
 * per-day counts of content_day_deltas for the days wholly inside a window (migration
 * 20261130120000), and the originals of the three days the windows cut, read from
 * `content_store_entity_seen_idx` (index-only), so the read does not grow with the window.
 */
export function platformCounts(db: Db, entityId: string, w: Windows) {
  const { previousDay, currentDay, endDay } = cutDays(w);
  const dayAfter = (day: string) => new Date(midnight(day).getTime() + DAY_MS);
  const ranges: [Date, Date][] = [
    [w.previousStart, dayAfter(previousDay)],
    [midnight(currentDay), dayAfter(currentDay)],
    [midnight(endDay), w.end],
  ];
  const edges = ranges.map(
    ([from, to]) => Prisma.sql`SELECT c.platform, ${seen} >= ${w.currentStart}::timestamptz AS current,
        (c.kind <> 'comment')::int AS sources, (c.kind = 'comment')::int AS comments
      FROM content_store c
      WHERE c.entity_id = ${entityId}::uuid AND ${seen} >= ${from}::timestamptz AND ${seen} < ${to}::timestamptz`,
  );
  return db.$queryRaw<PlatformCountRow[]>`
    SELECT platform, current, sum(sources)::int AS sources, sum(comments)::int AS comments
    FROM (
      SELECT d.platform, d.day > ${currentDay}::date AS current, d.sources, d.comments
      FROM content_day_deltas d
      WHERE d.entity_id = ${entityId}::uuid AND d.day > ${previousDay}::date AND d.day < ${endDay}::date
        AND d.day <> ${currentDay}::date
      UNION ALL
      ${Prisma.join(edges, " UNION ALL ")}
    ) parts
    GROUP BY 1, 2
    HAVING sum(sources) <> 0 OR sum(comments) <> 0`;
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

/**
 * The three days a window pair cuts (the previous window's first day, the day the current window starts,
 * today), each split at the same time of day (the windows are whole days long): which window each part
 * belongs to (null: neither), and which part is counted from the units (`counted`, the shorter one);
 * the other part is the day's roll-up less the counted part. An original belongs to one moment, so
 * statements and distinct sources both subtract exactly.
 */
interface EdgeDay {
  day: string;
  /** The counted part, [from, to). */
  from: Date;
  to: Date;
  counted: "previous" | "current" | null;
  other: "previous" | "current" | null;
}

export function edgeDays(w: Windows): EdgeDay[] {
  const { previousDay, currentDay, endDay } = cutDays(w);
  const cut = w.currentStart.getTime() - midnight(currentDay).getTime();
  const early = cut <= DAY_MS / 2;
  const days: [string, "previous" | "current" | null, "previous" | "current" | null][] = [
    [previousDay, null, "previous"],
    [currentDay, "previous", "current"],
    [endDay, "current", null],
  ];
  return days.map(([day, before, after]) => {
    const start = midnight(day).getTime();
    return early
      ? { day, from: new Date(start), to: new Date(start + cut), counted: before, other: after }
      : { day, from: new Date(start + cut), to: new Date(start + DAY_MS), counted: after, other: before };
  });
}

/**
 * Opinion units of the entities' evidence originals in the two windows, per level (see the
 * `opinion_rollups` migration): the daily rollups of the days wholly inside a window, and for the three
 * days the windows cut (edgeDays), the units of each one's shorter part counted from the units
 * themselves and the other part as the day's rollup less that count. So the units read are at most
 * half of three days' worth, however large the entity or the window.
 */
export function aspectCounts(db: Db, entityIds: string[], w: Windows) {
  const { previousDay, currentDay, endDay } = cutDays(w);
  const edges = edgeDays(w);
  return db.$queryRaw<AspectRow[]>`
    WITH edges AS (
      SELECT * FROM unnest(${edges.map((e) => e.day)}::date[], ${edges.map((e) => e.from)}::timestamptz[],
        ${edges.map((e) => e.to)}::timestamptz[], ${edges.map((e) => e.counted)}::text[], ${edges.map((e) => e.other)}::text[])
        AS e(day, from_at, to_at, counted, other)
    ),
    counted AS (
      SELECT entity_id, day, level, aspect, side, sum(n)::int AS statements, count(*)::int AS sources
      FROM (
        SELECT u.entity_id, u.day, u.content_id, k.level, k.aspect, k.side, count(*) AS n
        FROM (${Prisma.join(
          // One range per day, written out so the planner sees its bounds (its estimate stays small).
          edges.map(
            (e) => Prisma.sql`SELECT ${e.day}::date AS day, u.entity_id, u.content_id, u.seen_at, u.aspect, u.sentiment_label,
                u.kind, u.analyser_version
              FROM opinion_units u
              WHERE u.entity_id = ANY(${entityIds}::uuid[]) AND u.seen_at >= ${e.from}::timestamptz AND u.seen_at < ${e.to}::timestamptz`,
          ),
          " UNION ALL ",
        )}) u
        CROSS JOIN LATERAL opinion_unit_keys(u.seen_at, u.aspect, u.sentiment_label, u.kind, u.analyser_version) k
        GROUP BY 1, 2, 3, 4, 5, 6
      ) per_source
      GROUP BY 1, 2, 3, 4, 5
    )
    SELECT entity_id, current, level, aspect, side, sum(statements)::int AS statements, sum(sources)::int AS sources
    FROM (
      SELECT r.entity_id, r.day > ${currentDay}::date AS current, r.level, r.aspect, r.side, r.statements, r.sources
      FROM opinion_rollups r
      WHERE r.entity_id = ANY(${entityIds}::uuid[]) AND r.day > ${previousDay}::date AND r.day < ${endDay}::date
        AND r.day <> ${currentDay}::date
      UNION ALL
      SELECT c.entity_id, e.counted = 'current', c.level, c.aspect, c.side, c.statements, c.sources
      FROM counted c JOIN edges e ON e.day = c.day WHERE e.counted IS NOT NULL
      UNION ALL
      SELECT r.entity_id, e.other = 'current', r.level, r.aspect, r.side, r.statements, r.sources
      FROM opinion_rollups r JOIN edges e ON e.day = r.day
      WHERE r.entity_id = ANY(${entityIds}::uuid[]) AND e.other IS NOT NULL
      UNION ALL
      SELECT c.entity_id, e.other = 'current', c.level, c.aspect, c.side, -c.statements, -c.sources
      FROM counted c JOIN edges e ON e.day = c.day WHERE e.other IS NOT NULL
    ) parts
    GROUP BY 1, 2, 3, 4, 5
    HAVING sum(statements) <> 0 OR sum(sources) <> 0`;
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
 * A window holding at most this many of an entity's units is read whole, once for all its targets;
 * a larger one is walked per target along its aspect's strongest units.
 */
export const NARROW_WINDOW_UNITS = 50_000;

const SIDE_OF_ROW = Prisma.sql`CASE WHEN w.kind = 'request' THEN 'request' WHEN w.sentiment_label = 'negative' THEN 'complaint'
  WHEN w.sentiment_label = 'positive' THEN 'praise' ELSE 'neutral' END`;

/**
 * Candidate quotes of each target (entity, aspect, side) in the current window, strongest first
 * (most negative complaints, most positive praise). Only units whose text is still exactly the
 * original's slice at their offsets qualify, so every quote is verbatim. Two ways, by the size of the
 * entity's current window (`windowUnits`, its statements there, from the roll-ups):
 * - a window of at most NARROW_WINDOW_UNITS units is read once along `opinion_units_entity_seen_idx`
 *   and ranked per target (a narrow window of a large entity holds a tiny share of each aspect's
 *   units, so a walk in strength order would pass hundreds of thousands before finding a few);
 * - a larger window is walked per target along `opinion_units_entity_aspect_strength_idx` (strongest
 *   first, the index alone), a few more than needed, then their units and originals are read.
 */
export async function quoteCandidates(
  db: Db,
  targets: QuoteTarget[],
  w: Windows,
  perTarget: number,
  windowUnits: ReadonlyMap<string, number>,
): Promise<QuoteRow[]> {
  const indexed = targets.map((t, i) => ({ ...t, i }));
  const narrow = indexed.filter((t) => (windowUnits.get(t.entityId) ?? 0) <= NARROW_WINDOW_UNITS);
  const wide = indexed.filter((t) => (windowUnits.get(t.entityId) ?? 0) > NARROW_WINDOW_UNITS);
  const [fromWindow, fromWalks] = await Promise.all([
    narrow.length === 0 ? [] : windowQuotes(db, narrow, w, perTarget),
    wide.length === 0 ? [] : walkedQuotes(db, wide, w, perTarget),
  ]);
  return [...fromWindow, ...fromWalks];
}

function windowQuotes(db: Db, targets: (QuoteTarget & { i: number })[], w: Windows, perTarget: number) {
  const entities = [...new Set(targets.map((t) => t.entityId))];
  return db.$queryRaw<QuoteRow[]>`
    WITH win AS MATERIALIZED (
      SELECT w.id, w.entity_id, w.aspect, w.sentiment, ${SIDE_OF_ROW} AS side
      FROM opinion_units w
      WHERE w.entity_id = ANY(${entities}::uuid[]) AND w.seen_at >= ${w.currentStart}::timestamptz
        AND w.seen_at < ${w.end}::timestamptz
    ),
    t AS (
      SELECT * FROM unnest(${targets.map((t) => t.i)}::int[], ${targets.map((t) => t.entityId)}::uuid[],
        ${targets.map((t) => t.aspect)}::text[], ${targets.map((t) => t.side)}::text[]) AS t(target, entity_id, aspect, side)
    ),
    strongest AS (
      SELECT t.target, x.id, x.strength FROM t
      CROSS JOIN LATERAL (
        SELECT win.id, CASE WHEN t.side = 'praise' THEN -win.sentiment ELSE win.sentiment END AS strength FROM win
        WHERE win.entity_id = t.entity_id AND win.aspect = t.aspect AND win.side = t.side
        ORDER BY strength, win.id LIMIT ${perTarget * 4}) x
    ),
    checked AS (
      SELECT s.target, u.id, u.content_id, u.text, u.start_offset, u.end_offset, u.sentiment,
        c.platform, c.url, c.author, c.published_at,
        row_number() OVER (PARTITION BY s.target ORDER BY s.strength, u.id) AS n
      FROM strongest s JOIN opinion_units u ON u.id = s.id JOIN content_store c ON c.id = u.content_id
      WHERE substr(c.content, u.start_offset + 1, u.end_offset - u.start_offset) = u.text
    )
    SELECT target, id, content_id, text, start_offset, end_offset, sentiment, platform, url, author, published_at
    FROM checked WHERE n <= ${perTarget}
    ORDER BY target, n`;
}

function walkedQuotes(db: Db, targets: (QuoteTarget & { i: number })[], w: Windows, perTarget: number) {
  // Candidates are read along the index first (strongest first, a few more than needed; the index alone, its
  // INCLUDE holding what the filter and the join need), then their units and originals, checked: a join
  // would let the planner read every unit of the aspect.
  const parts = targets.map(
    (t) => Prisma.sql`(
      SELECT ${t.i}::int AS target, u.id, u.content_id, u.text, u.start_offset, u.end_offset, u.sentiment,
        c.platform, c.url, c.author, c.published_at
      FROM (
        SELECT u.id, u.sentiment
        FROM opinion_units u
        WHERE u.entity_id = ${t.entityId}::uuid AND u.aspect = ${t.aspect} AND ${SIDE_CONDITION[t.side]}
          AND u.seen_at >= ${w.currentStart}::timestamptz AND u.seen_at < ${w.end}::timestamptz
        ORDER BY u.sentiment ${t.side === "praise" ? Prisma.sql`DESC` : Prisma.sql`ASC`}
        LIMIT ${perTarget * 4}
      ) k JOIN opinion_units u ON u.id = k.id JOIN content_store c ON c.id = u.content_id
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
