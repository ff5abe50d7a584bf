import { createHash } from "node:crypto";
import type pg from "pg";
import { jobIds } from "../../jobs/ids.js";
import type { JobPayload, Queues } from "../../platform/queues.js";
import type { Redis } from "../../platform/redis.js";
import {
  adaptTrackerModel,
  type KindOverlay,
  type LabelledText,
  MIN_LABELLED,
  readTrackerKinds,
  type TrackerKindReading,
} from "./feedback-kind/adapt.js";
import { byPolarity, type FeedbackKind, KIND_OF_CLASS } from "./feedback-kind/index.js";
import { kindFromLabels, type LabelKind, labelNames } from "./feedback-kind/labels.js";
import { EMBED_TEXT_CHARS, storedConfidence } from "./service.js";

/**
 * Feedback kinds of a tracker's unlabelled issues, read the way its maintainers triage (feedback-kind/adapt.ts).
 * A tracker is an entity's sources of one platform and one repository (`metadata.repository`, as the GitHub
 * collector stores it; null when the sources name none). Once it holds enough issues whose labels name a kind
 * (`MIN_LABELLED`, of two kinds at least), the shared model is adapted to them and every unlabelled source of the
 * tracker gets the adapted model's kind and probability; labelled sources keep their labels' kind. The job
 * (`enrichment.kinds.v1`) is queued by enrichment, re-analysis and evidence capture for the trackers of the rows
 * they wrote, 30 s after the chunk that queues it, one queue entry per tracker and minute (`queueTrackerKinds`), so
 * new issues are read the tracker's way shortly after they are enriched (by the shared model meanwhile), and a
 * tracker's reading follows its labels.
 */
export type Tracker = JobPayload<"enrichment.kinds.v1">;

/** The newest labelled sources the adaptation learns from (its cost grows with them: 1–2 s of a thread for 1,000). */
export const MAX_LABELLED_ROWS = 1_000;
/** The newest labelled sources whose labels are looked at for the ones that name a kind (their ids and labels only). */
const LABEL_SCAN_ROWS = 20_000;
/** How much of a tracker is read again: its newest `maxRows` sources (older ones keep their kinds), `pageRows` at a time. */
export interface TrackerReadLimits {
  maxRows: number;
  pageRows: number;
}
export const TRACKER_READ_LIMITS: TrackerReadLimits = { maxRows: 10_000, pageRows: 500 };

/** Where a tracker's adaptation and readings run: on an analysis thread (analysis-pool.ts), or here. */
export interface KindThreads {
  adapt: (labelled: LabelledText[]) => Promise<KindOverlay | null>;
  read: (overlay: KindOverlay, rows: { title: string; content: string }[]) => Promise<TrackerKindReading[]>;
}
export const inlineKindThreads: KindThreads = {
  adapt: async (labelled) => adaptTrackerModel(labelled),
  read: async (overlay, rows) => readTrackerKinds(overlay, rows),
};

/**
 * What a tracker's last run left for the next: the fingerprint of the labelled sources it learnt from, and the
 * sources enriched since (queued by `queueTrackerKinds`). With the same labelled sources the next run reads only
 * those; when they changed (a label added or removed), it reads the tracker's newest sources again.
 */
export interface TrackerMemory {
  fingerprint: (tracker: Tracker) => Promise<string | null>;
  setFingerprint: (tracker: Tracker, fingerprint: string) => Promise<void>;
  addPending: (tracker: Tracker, ids: string[]) => Promise<void>;
  /** Takes up to `count` pending ids (they are gone from the memory once taken). */
  takePending: (tracker: Tracker, count: number) => Promise<string[]>;
  clearPending: (tracker: Tracker) => Promise<void>;
}

/** How long a tracker's memory lasts without a run: a tracker idle that long is read whole again. */
const MEMORY_TTL_SECONDS = 7 * 24 * 3600;

/** The tracker memory in Redis: a string and a set per tracker, under `<prefix>:kinds:<hash of the tracker>`. */
export function redisTrackerMemory(redis: Redis, prefix: string): TrackerMemory {
  const key = (tracker: Tracker, part: string) =>
    `${prefix}:kinds:${createHash("sha256")
      .update(JSON.stringify([tracker.entityId, tracker.platform, tracker.repository]))
      .digest("hex")
      .slice(0, 32)}:${part}`;
  return {
    fingerprint: (tracker) => redis.get(key(tracker, "fingerprint")),
    setFingerprint: async (tracker, fingerprint) => {
      await redis.set(key(tracker, "fingerprint"), fingerprint, "EX", MEMORY_TTL_SECONDS);
    },
    addPending: async (tracker, ids) => {
      if (ids.length === 0) return;
      await redis.sadd(key(tracker, "pending"), ...ids);
      await redis.expire(key(tracker, "pending"), MEMORY_TTL_SECONDS);
    },
    takePending: async (tracker, count) => (await redis.spop(key(tracker, "pending"), count)) ?? [],
    clearPending: async (tracker) => {
      await redis.del(key(tracker, "pending"));
    },
  };
}

/** The tracker memory of a process: its Redis under the service's key prefix. */
export function trackerMemoryOf(deps: { redis: Redis; config: { REDIS_PREFIX: string } }): TrackerMemory {
  return redisTrackerMemory(deps.redis, deps.config.REDIS_PREFIX);
}

export interface KindAdaptationResult {
  /** Labelled sources the adaptation learnt from (0 when there were too few to adapt to). */
  labelled: number;
  adapted: boolean;
  /** Unlabelled sources read by the adapted model, and those whose stored kind or confidence changed. */
  read: number;
  changed: number;
  /** Whether the tracker's newest sources were read (else only those enriched since the last run, or none). */
  whole: boolean;
}

interface TrackerRow {
  id: string;
  title: string;
  content: string;
  labels: unknown;
  createdAt: Date;
  feedbackKind: FeedbackKind | null;
  confidence: number | null;
}

const OTHER_KINDS = new Set<FeedbackKind | null>(["praise", "complaint", "other"]);

/**
 * One tracker's enriched sources ($1 entity, $2 platform, $3 repository). Pull requests are not: a `bug` label on
 * one marks a fix, not a report, and a change is no feedback to read.
 */
const OF_TRACKER = `c.entity_id = $1::uuid AND c.platform = $2 AND c.kind = 'source' AND e.enriched_at IS NOT NULL
  AND (c.metadata->>'repository') IS NOT DISTINCT FROM $3::text AND (c.metadata->>'pull_request') IS DISTINCT FROM 'true'`;
/** The originals with their enrichment (`c`, `e`), which OF_TRACKER reads. */
const ENRICHED = "content_store c JOIN content_enrichment e ON e.content_id = c.id";
const WITH_LABELS = `jsonb_typeof(c.metadata->'labels') = 'array' AND jsonb_array_length(c.metadata->'labels') > 0`;
/** What is read of a source: its title and the start of its text (as its embedding reads it). */
const COLUMNS = `c.id, c.title, left(c.content, ${EMBED_TEXT_CHARS}) AS content, c.metadata->'labels' AS labels,
  c.created_at AS "createdAt", e.feedback_kind AS "feedbackKind", e.feedback_kind_confidence AS confidence`;

export async function adaptTrackerKinds(
  pool: pg.Pool,
  tracker: Tracker,
  threads: KindThreads = inlineKindThreads,
  limits: TrackerReadLimits = TRACKER_READ_LIMITS,
  memory?: TrackerMemory,
): Promise<KindAdaptationResult> {
  const params = [tracker.entityId, tracker.platform, tracker.repository];
  const result: KindAdaptationResult = { labelled: 0, adapted: false, read: 0, changed: 0, whole: false };
  // Most trackers carry no labels: their metadata decides before any text is read.
  const { rows: counted } = await pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM ${ENRICHED} WHERE ${OF_TRACKER} AND ${WITH_LABELS}`,
    params,
  );
  if ((counted[0]?.n ?? 0) < MIN_LABELLED) {
    await memory?.clearPending(tracker);
    return result;
  }

  // Labels that name no kind (`help wanted`) are common: the labels are read first, the texts of the chosen after.
  const { rows: withLabels } = await pool.query<{ id: string; labels: unknown }>(
    `SELECT c.id, c.metadata->'labels' AS labels FROM ${ENRICHED} WHERE ${OF_TRACKER} AND ${WITH_LABELS}
     ORDER BY c.created_at DESC, c.id DESC LIMIT ${LABEL_SCAN_ROWS}`,
    params,
  );
  const kindOf = new Map<string, LabelKind>();
  for (const row of withLabels) {
    const kind = kindFromLabels(labelNames(row.labels));
    if (kind !== null && kindOf.size < MAX_LABELLED_ROWS) kindOf.set(row.id, kind);
  }
  const fingerprint = createHash("sha256")
    .update([...kindOf].map(([id, kind]) => `${id}:${kind}`).join("\n"))
    .digest("hex");
  // Taken before the read, so ids queued meanwhile wait for the next run rather than being lost.
  const whole = memory === undefined || (await memory.fingerprint(tracker)) !== fingerprint;
  const pending = memory ? await memory.takePending(tracker, limits.maxRows) : [];
  if (!whole && pending.length === 0) return result;

  try {
    await readTracker(pool, params, threads, limits, { kindOf, pending, whole, result });
    if (whole) await memory?.setFingerprint(tracker, fingerprint);
  } catch (err) {
    // A failed run gives its rows back for the retry (a whole read is redone anyway: its fingerprint was not kept).
    if (memory && pending.length > 0) await memory.addPending(tracker, pending);
    throw err;
  }
  return result;
}

/**
 * The adaptation to the labelled sources, then the tracker's rows read with it: its newest, or the pending ones.
 * `params` are OF_TRACKER's ($1 entity, $2 platform, $3 repository).
 */
async function readTracker(
  pool: pg.Pool,
  params: (string | null)[],
  threads: KindThreads,
  limits: TrackerReadLimits,
  run: { kindOf: Map<string, LabelKind>; pending: string[]; whole: boolean; result: KindAdaptationResult },
): Promise<void> {
  const { kindOf, pending, whole, result } = run;
  const { rows: texts } = await pool.query<{ id: string; title: string; content: string }>(
    `SELECT id, title, left(content, ${EMBED_TEXT_CHARS}) AS content FROM content_store WHERE id = ANY($1::uuid[])`,
    [[...kindOf.keys()]],
  );
  const textOf = new Map(texts.map((t) => [t.id, t]));
  const labelled: LabelledText[] = [...kindOf].flatMap(([id, kind]) => {
    const text = textOf.get(id);
    return text ? [{ title: text.title, content: text.content, kind }] : [];
  });
  const overlay = await threads.adapt(labelled);
  if (overlay === null) return;
  result.labelled = labelled.length;
  result.adapted = true;
  result.whole = whole;

  const readPage = async (page: TrackerRow[]) => {
    const unlabelled = page.filter((row) => kindFromLabels(labelNames(row.labels)) === null);
    if (unlabelled.length === 0) return;
    const readings = await threads.read(overlay, unlabelled);
    result.read += readings.length;
    result.changed += await writeKinds(pool, unlabelled, readings);
  };
  if (whole) {
    // The newest sources, a page at a time.
    let after = null as { createdAt: Date; id: string } | null;
    for (let scanned = 0; scanned < limits.maxRows; ) {
      const { rows: page }: { rows: TrackerRow[] } = await pool.query<TrackerRow>(
        `SELECT ${COLUMNS} FROM ${ENRICHED} WHERE ${OF_TRACKER}
           AND ($4::timestamptz IS NULL OR (c.created_at, c.id) < ($4::timestamptz, $5::uuid))
         ORDER BY c.created_at DESC, c.id DESC LIMIT $6::int`,
        [...params, after?.createdAt ?? null, after?.id ?? null, Math.min(limits.pageRows, limits.maxRows - scanned)],
      );
      if (page.length === 0) break;
      scanned += page.length;
      after = page.at(-1)!;
      await readPage(page);
      if (page.length < limits.pageRows) break;
    }
  } else {
    // The sources enriched since the last run, still of this tracker.
    for (let i = 0; i < pending.length; i += limits.pageRows) {
      const { rows: page } = await pool.query<TrackerRow>(
        `SELECT ${COLUMNS} FROM ${ENRICHED} WHERE ${OF_TRACKER} AND c.id = ANY($4::uuid[])`,
        [...params, pending.slice(i, i + limits.pageRows)],
      );
      await readPage(page);
    }
  }
}

/** Stores the kinds that changed. "Other" is praise, a complaint or other by the source's units, as enrichment decides it. */
async function writeKinds(pool: pg.Pool, rows: TrackerRow[], readings: TrackerKindReading[]): Promise<number> {
  const needPolarity = rows.filter((row, i) => readings[i]!.class === "other" && !OTHER_KINDS.has(row.feedbackKind));
  const polarityOf = await otherKinds(
    pool,
    needPolarity.map((r) => r.id),
  );
  const writes = rows.flatMap((row, i) => {
    const reading = readings[i]!;
    const kind =
      reading.class === "other"
        ? OTHER_KINDS.has(row.feedbackKind)
          ? row.feedbackKind!
          : (polarityOf.get(row.id) ?? "other")
        : KIND_OF_CLASS[reading.class];
    const confidence = storedConfidence(reading.confidence);
    const same = kind === row.feedbackKind && row.confidence !== null && Math.abs(row.confidence - confidence) < 5e-5;
    return same ? [] : [{ id: row.id, kind, confidence }];
  });
  if (writes.length === 0) return 0;
  // The rows are locked in id order first, as every other writer of them locks them (service.ts, lockForUnits).
  const { rowCount } = await pool.query(
    `WITH locked AS (SELECT c.id FROM ${ENRICHED} WHERE c.id = ANY($1::uuid[]) AND e.enriched_at IS NOT NULL
                     ORDER BY c.id FOR NO KEY UPDATE OF c)
     UPDATE content_enrichment e SET feedback_kind = u.kind, feedback_kind_confidence = u.confidence
     FROM unnest($1::uuid[], $2::text[], $3::real[]) AS u(id, kind, confidence) JOIN locked l ON l.id = u.id
     WHERE e.content_id = u.id`,
    [writes.map((w) => w.id), writes.map((w) => w.kind), writes.map((w) => w.confidence)],
  );
  return rowCount ?? 0;
}

/** Praise, complaint or other for each source, by the net polarity of its stored units (feedback-kind/index.ts). */
async function otherKinds(pool: pg.Pool, ids: string[]): Promise<Map<string, FeedbackKind>> {
  if (ids.length === 0) return new Map();
  const { rows } = await pool.query<{ contentId: string; label: string; sentiment: number; kind: string }>(
    `SELECT content_id AS "contentId", sentiment_label AS label, sentiment, kind FROM opinion_units WHERE content_id = ANY($1::uuid[])`,
    [ids],
  );
  const unitsOf = new Map<string, { label: string; sentiment: number; kind: string }[]>(ids.map((id) => [id, []]));
  for (const u of rows) unitsOf.get(u.contentId)?.push(u);
  return new Map([...unitsOf].map(([id, units]) => [id, byPolarity(units as Parameters<typeof byPolarity>[0])]));
}

/** A tracker's adaptation runs at most once per window … */
export const KIND_ADAPT_WINDOW_MS = 60_000;
/** … this long after the first chunk of the window asked for it, so the chunks of an import queue it once. */
export const KIND_ADAPT_DELAY_MS = 30_000;

/**
 * The trackers of stored sources that may be read their tracker's way (sources that name a repository or carry
 * labels), each with those of the sources that belong to it. Sources of other platforms (reviews, posts) name
 * neither and belong to none.
 */
export async function trackersOf(pool: pg.Pool, contentIds: string[]): Promise<{ tracker: Tracker; ids: string[] }[]> {
  const { rows } = await pool.query<Tracker & { ids: string[] }>(
    `SELECT c.entity_id AS "entityId", c.platform, c.metadata->>'repository' AS repository, array_agg(c.id) AS ids FROM ${ENRICHED}
     WHERE c.id = ANY($1::uuid[]) AND c.kind = 'source' AND e.enriched_at IS NOT NULL
       AND (c.metadata ? 'repository' OR jsonb_typeof(c.metadata->'labels') = 'array')
     GROUP BY 1, 2, 3`,
    [contentIds],
  );
  // A repository name the job's payload cannot carry (metadata is the client's) is no tracker.
  return rows
    .filter((t) => t.repository === null || (t.repository.length >= 1 && t.repository.length <= 300))
    .map(({ ids, ...tracker }) => ({ tracker, ids }));
}

/**
 * Queues the kind adaptation of the trackers of rows just enriched or re-analysed, and notes the rows in each
 * tracker's memory for that run to read.
 */
export async function queueTrackerKinds(
  deps: { pool: pg.Pool; queues: Pick<Queues, "enqueue">; memory: TrackerMemory },
  contentIds: string[],
  now = Date.now(),
): Promise<number> {
  const found = await trackersOf(deps.pool, contentIds);
  const window = Math.floor(now / KIND_ADAPT_WINDOW_MS);
  for (const { tracker, ids } of found) {
    await deps.memory.addPending(tracker, ids);
    await deps.queues.enqueue("enrichment.kinds.v1", tracker, {
      jobId: jobIds.kindAdaptation(tracker, window),
      delay: KIND_ADAPT_DELAY_MS,
    });
  }
  return found.length;
}
