import type pg from "pg";
import { jobIds } from "../../jobs/ids.js";
import type { JobPayload, Queues } from "../../platform/queues.js";
import { MIN_LABELLED, readTrackerKinds, type TrackerKindReading, type TrackerKindTask } from "./feedback-kind/adapt.js";
import { byPolarity, type FeedbackKind } from "./feedback-kind/index.js";
import { kindFromLabels, labelNames } from "./feedback-kind/labels.js";
import { storedConfidence } from "./service.js";

/**
 * Feedback kinds of a tracker's unlabelled issues, read the way its maintainers triage (feedback-kind/adapt.ts).
 * A tracker is an entity's sources of one platform and one repository (`metadata.repository`, as the GitHub
 * collector stores it; null when the sources name none). Once it holds enough issues whose labels name a kind
 * (`MIN_LABELLED`, of two kinds at least), the shared model is adapted to them and every unlabelled source of the
 * tracker gets the adapted model's kind and probability; labelled sources keep their labels' kind. The job
 * (`enrichment.kinds.v1`) is queued by enrichment and re-analysis for the trackers of the rows they wrote, at most
 * about once a minute per tracker (jobs/ids.ts), so new issues are read the tracker's way shortly after they are
 * enriched (by the shared model meanwhile), and a tracker's reading follows its labels as they are added.
 */
export type Tracker = JobPayload<"enrichment.kinds.v1">;

/** The newest sources of a tracker that are read (labelled or not); older ones keep their kinds. */
export const MAX_TRACKER_ROWS = 20_000;
/** The newest labelled sources the adaptation learns from (its cost grows with them: about a second for 2,000). */
export const MAX_LABELLED_ROWS = 2_000;
/** Rows of a statement that writes kinds. */
const WRITE_ROWS = 1_000;

/** Reads a tracker's unlabelled issues: in this thread, or on an analysis thread (analysis-pool.ts). */
export type TrackerKindReader = (task: TrackerKindTask) => Promise<TrackerKindReading[] | null>;
export const readTrackerKindsInline: TrackerKindReader = async (task) => readTrackerKinds(task);

export interface KindAdaptationResult {
  /** Sources of the tracker whose labels name a kind. */
  labelled: number;
  /** Whether they were enough to adapt to. */
  adapted: boolean;
  /** Unlabelled sources read by the adapted model, and those whose stored kind or confidence changed. */
  read: number;
  changed: number;
}

interface TrackerRow {
  id: string;
  title: string;
  content: string;
  labels: unknown;
  feedbackKind: FeedbackKind | null;
  confidence: number | null;
}

const STORED: Record<"bug" | "feature" | "question", FeedbackKind> = {
  bug: "bug_report",
  feature: "feature_request",
  question: "question",
};
const OTHER_KINDS = new Set<FeedbackKind | null>(["praise", "complaint", "other"]);

/** The statement's condition for one tracker's enriched sources ($1 entity, $2 platform, $3 repository). */
const OF_TRACKER = `entity_id = $1::uuid AND platform = $2 AND kind = 'source' AND enriched_at IS NOT NULL
  AND (metadata->>'repository') IS NOT DISTINCT FROM $3::text`;

export async function adaptTrackerKinds(
  pool: pg.Pool,
  tracker: Tracker,
  read: TrackerKindReader = readTrackerKindsInline,
): Promise<KindAdaptationResult> {
  const params = [tracker.entityId, tracker.platform, tracker.repository];
  // Most trackers carry no labels: a count over the sources' metadata decides before any text is read.
  const { rows: counted } = await pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM content_store
     WHERE ${OF_TRACKER} AND jsonb_typeof(metadata->'labels') = 'array' AND jsonb_array_length(metadata->'labels') > 0`,
    params,
  );
  const result: KindAdaptationResult = { labelled: 0, adapted: false, read: 0, changed: 0 };
  if ((counted[0]?.n ?? 0) < MIN_LABELLED) return result;

  const { rows } = await pool.query<TrackerRow>(
    `SELECT id, title, content, metadata->'labels' AS labels, feedback_kind AS "feedbackKind", feedback_kind_confidence AS confidence
     FROM content_store WHERE ${OF_TRACKER} ORDER BY created_at DESC, id DESC LIMIT ${MAX_TRACKER_ROWS}`,
    params,
  );
  const task: TrackerKindTask = { labelled: [], unlabelled: [] };
  const unlabelled: TrackerRow[] = [];
  for (const row of rows) {
    const kind = kindFromLabels(labelNames(row.labels));
    if (kind === null) {
      unlabelled.push(row);
      task.unlabelled.push({ title: row.title, content: row.content });
    } else if (task.labelled.length < MAX_LABELLED_ROWS) task.labelled.push({ title: row.title, content: row.content, kind });
    if (kind !== null) result.labelled++;
  }
  const readings = unlabelled.length > 0 ? await read(task) : null;
  if (readings === null) return result;
  result.adapted = true;
  result.read = readings.length;

  // "Other" is praise, a complaint or other by the source's units, as enrichment decides it: a source the shared
  // model read as a bug, a request or a question has its units read for it.
  const needPolarity = unlabelled.filter((row, i) => readings[i]!.class === "other" && !OTHER_KINDS.has(row.feedbackKind));
  const polarityOf = await otherKinds(
    pool,
    needPolarity.map((r) => r.id),
  );
  const writes = unlabelled.flatMap((row, i) => {
    const reading = readings[i]!;
    const kind =
      reading.class === "other"
        ? OTHER_KINDS.has(row.feedbackKind)
          ? row.feedbackKind!
          : (polarityOf.get(row.id) ?? "other")
        : STORED[reading.class];
    const confidence = storedConfidence(reading.confidence);
    const same = kind === row.feedbackKind && row.confidence !== null && Math.abs(row.confidence - confidence) < 5e-5;
    return same ? [] : [{ id: row.id, kind, confidence }];
  });
  for (let i = 0; i < writes.length; i += WRITE_ROWS) {
    const part = writes.slice(i, i + WRITE_ROWS);
    const { rowCount } = await pool.query(
      `UPDATE content_store c SET feedback_kind = u.kind, feedback_kind_confidence = u.confidence
       FROM unnest($1::uuid[], $2::text[], $3::real[]) AS u(id, kind, confidence)
       WHERE c.id = u.id AND c.enriched_at IS NOT NULL`,
      [part.map((w) => w.id), part.map((w) => w.kind), part.map((w) => w.confidence)],
    );
    result.changed += rowCount ?? 0;
  }
  return result;
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
 * The trackers of stored sources that may be read their tracker's way: sources that name a repository or carry
 * labels. Sources of other platforms (reviews, posts) name neither and queue nothing.
 */
export async function trackersOf(pool: pg.Pool, contentIds: string[]): Promise<Tracker[]> {
  const { rows } = await pool.query<Tracker>(
    `SELECT DISTINCT entity_id AS "entityId", platform, metadata->>'repository' AS repository FROM content_store
     WHERE id = ANY($1::uuid[]) AND kind = 'source' AND enriched_at IS NOT NULL
       AND (metadata ? 'repository' OR jsonb_typeof(metadata->'labels') = 'array')`,
    [contentIds],
  );
  // A repository name the job's payload cannot carry (metadata is the client's) is no tracker.
  return rows.filter((t) => t.repository === null || (t.repository.length >= 1 && t.repository.length <= 300));
}

/** Queues the kind adaptation of the trackers of rows just enriched or re-analysed. */
export async function queueTrackerKinds(
  deps: { pool: pg.Pool; queues: Pick<Queues, "enqueue"> },
  contentIds: string[],
  now = Date.now(),
): Promise<number> {
  const trackers = await trackersOf(deps.pool, contentIds);
  const window = Math.floor(now / KIND_ADAPT_WINDOW_MS);
  for (const tracker of trackers) {
    await deps.queues.enqueue("enrichment.kinds.v1", tracker, {
      jobId: jobIds.kindAdaptation(tracker, window),
      delay: KIND_ADAPT_DELAY_MS,
    });
  }
  return trackers.length;
}
