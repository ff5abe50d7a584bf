import { type CancelWatch, JobCancelled } from "../../jobs/cancellation.js";
import type { AppDeps } from "../../platform/deps.js";
import { CoverageInputSchema } from "../coverage/schemas.js";
import { recordCoverageIf } from "../coverage/service.js";
import { SourceItem } from "../ingest/schemas.js";
import { ingestContent } from "../ingest/service.js";
import { createHttpClient, UpstreamError } from "./collectors/http.js";
import { type CollectorRegistry, noCollectorReason } from "./collectors/index.js";
import type { CollectedSource, Collector, CollectorEntity, CollectorInput } from "./collectors/types.js";
import { assertFence, FenceLost, type PlatformProgress, platformProgressUpdate, savePlatformProgress } from "./progress.js";

/**
 * One platform of one job: page through the collector from the stored cursor, store
 * each page through the ingest service (the same one `POST /ingest/content` uses),
 * save the cursor and counts after every page, and record coverage when the platform
 * settles:
 * - `exhaustive`: the upstream was read to the end of the window;
 * - `bounded`: the page limit (or the upstream's own paging cap) stopped it, or it
 *   failed after some pages were stored;
 * - `sampled`: the upstream said its answer was incomplete, or some web URLs failed;
 * - `blocked` (with the reason): no collector or credentials, or the upstream refused
 *   before anything was read.
 * Transient upstream failures are retried inside the run (see http.ts) and then by the
 * job's own retries; on the last attempt they settle the platform instead.
 */
export const WINDOW_DAYS = { brief: 90, deep: 365 } as const;

export interface JobContext {
  id: string;
  fence: number;
  depth: "brief" | "deep";
  objective: string;
  questions: string[];
  createdAt: Date;
  finalAttempt: boolean;
  /** Stops the run between pages (and aborts calls in flight) once the job is cancelled. */
  cancel: CancelWatch;
  /**
   * The job completes in the statement that settles its platform: it has one platform left to run and
   * no analysis to start, so nothing else happens between the settle and the completion.
   */
  completesOnSettle?: boolean;
}

export type RunDeps = Pick<AppDeps, "db" | "pool" | "queues" | "redis" | "pubsub" | "logger" | "config" | "reads">;
export type PlatformOutcome = "settled" | "retry";

export const maxPagesFor = (config: AppDeps["config"], depth: "brief" | "deep") =>
  depth === "deep" ? Math.min(100, config.COLLECTOR_MAX_PAGES * 3) : config.COLLECTOR_MAX_PAGES;

export const collectionScope = (depth: "brief" | "deep") => `collection_job:${depth}:last_${WINDOW_DAYS[depth]}_days`;

function collectorInput(deps: RunDeps, job: JobContext, entity: CollectorEntity, collector: Collector): CollectorInput {
  const { config } = deps;
  return {
    entity,
    objective: job.objective,
    questions: job.questions,
    depth: job.depth,
    since: new Date(job.createdAt.getTime() - WINDOW_DAYS[job.depth] * 86_400_000),
    pageSize: config.COLLECTOR_PAGE_SIZE,
    maxComments: job.depth === "deep" ? Math.min(500, config.COLLECTOR_MAX_COMMENTS * 2) : config.COLLECTOR_MAX_COMMENTS,
    config,
    http: createHttpClient({
      timeoutMs: config.COLLECTOR_TIMEOUT_MS,
      retries: config.COLLECTOR_RETRIES,
      requestsPerSecond: config.COLLECTOR_REQUESTS_PER_SECOND,
      maxRetryAfterMs: config.COLLECTOR_MAX_RETRY_AFTER_MS,
      allowPrivateUrls: config.COLLECTOR_ALLOW_PRIVATE_URLS || !collector.fetchesUserUrls,
      signal: job.cancel.signal,
    }),
  };
}

async function storePage(
  deps: RunDeps,
  entity: CollectorEntity & { workspaceId: string },
  job: JobContext,
  sources: CollectedSource[],
): Promise<{ stored: number; inserted: number; deduplicated: number }> {
  const valid = sources.flatMap((s) => {
    const parsed = SourceItem.safeParse(s);
    if (!parsed.success) deps.logger.warn({ jobId: job.id, platform: s.platform, id: s.id }, "collected item dropped: out of bounds");
    return parsed.success ? [parsed.data] : [];
  });
  const totals = { stored: 0, inserted: 0, deduplicated: 0 };
  for (let i = 0; i < valid.length; i += 500) {
    const res = await ingestContent(deps, entity, {
      sources: valid.slice(i, i + 500),
      collection_run_id: job.id,
      collection_scope: collectionScope(job.depth),
      coverage_state: undefined,
    });
    totals.stored += res.stored;
    totals.inserted += res.inserted;
    totals.deduplicated += res.skipped_dedup;
  }
  return totals;
}

const worst = (a: PlatformProgress["partial"], b: PlatformProgress["partial"]) =>
  a === "sampled" || b === "sampled" ? "sampled" : a === "bounded" || b === "bounded" ? "bounded" : null;

export async function runPlatform(
  deps: RunDeps,
  job: JobContext,
  entity: CollectorEntity & { workspaceId: string },
  platform: string,
  start: PlatformProgress,
  collectors: CollectorRegistry,
): Promise<PlatformOutcome> {
  const save = (p: PlatformProgress) => savePlatformProgress(deps.db, job.id, job.fence, platform, p);
  const p: PlatformProgress = { ...start, started_at: start.started_at ?? new Date().toISOString(), error: null };
  const collector: Collector | undefined = collectors[platform];
  if (!collector) return settle(deps, job, entity, platform, p, "blocked", noCollectorReason(platform));
  const input = collectorInput(deps, job, entity, collector);
  const blocked = collector.blockedReason(input);
  if (blocked) return settle(deps, job, entity, platform, p, "blocked", blocked, collector.describe(input));

  p.status = "running";
  p.query = collector.describe(input).slice(0, 5000);
  if (p.pages === 0) p.cursor_start = p.cursor;
  // Progress is written after each stored page and when the platform settles (with its coverage
  // record): a platform read in one page costs one write.
  const maxPages = maxPagesFor(deps.config, job.depth) * (collector.onePagePerItem ? input.pageSize : 1);
  let note: string | null = null;
  try {
    while (p.pages < maxPages) {
      job.cancel.checkpoint();
      const page = await collector.fetchPage(input, p.cursor);
      job.cancel.checkpoint();
      // A run that lost the job must not store on behalf of the run that took over.
      if (page.sources.length > 0) await assertFence(deps.db, job.id, job.fence);
      const stats = await storePage(deps, entity, job, page.sources);
      const found = page.sources.reduce((n, s) => n + 1 + s.comments.length, 0);
      p.pages += 1;
      p.found += found;
      p.stored += stats.stored;
      p.inserted += stats.inserted;
      p.deduplicated += stats.deduplicated;
      p.partial = worst(p.partial, page.partial ?? null);
      if (page.note) note = page.note;
      if (page.target) p.targets.push({ ...page.target, items_found: found, items_stored: stats.stored });
      p.cursor = page.next;
      if (page.next === null) {
        p.reached_end = true;
        break;
      }
      await save(p);
    }
  } catch (err) {
    if (err instanceof FenceLost) throw err;
    // Cancelled: what was stored stays; the platform keeps its counts and cursor, stays `cancelled`
    // (as the cancel left it), and the run ends.
    if (job.cancel.signal.aborted || err instanceof JobCancelled) {
      await save(p).catch((saveErr: unknown) => {
        if (!(saveErr instanceof JobCancelled)) throw saveErr;
      });
      if (err instanceof JobCancelled) throw err;
      throw job.cancel.signal.reason instanceof JobCancelled ? job.cancel.signal.reason : new JobCancelled("The collection job");
    }
    const upstream = err instanceof UpstreamError ? err : undefined;
    const message = upstream ? upstream.message : `collector error: ${(err as Error).message}`;
    if (!job.finalAttempt && upstream?.kind !== "permanent") {
      deps.logger.warn({ jobId: job.id, platform, err: message }, "platform will be retried");
      await save({ ...p, status: "retrying", error: message });
      return "retry";
    }
    p.error = message;
    if (p.pages > 0)
      return settle(deps, job, entity, platform, p, "bounded", `stopped after ${p.pages} page(s): ${message}`, p.query ?? undefined);
    // Nothing read: a refusal proves the platform is blocked; otherwise nothing is known of its coverage.
    const [state, reason] = nothingRead(upstream, message);
    return settle(deps, job, entity, platform, p, state, reason, p.query ?? undefined);
  }

  if (!p.reached_end) {
    return settle(deps, job, entity, platform, p, "bounded", note ?? `stopped by the page limit (${maxPages} pages)`, p.query ?? undefined);
  }
  if (platform === "web" && p.targets.length > 0) {
    const failed = p.targets.filter((t) => t.status === "failed");
    if (failed.length === p.targets.length) {
      const reason = `no URL could be read: ${failed.map((t) => `${t.target}: ${t.error}`).join("; ")}`.slice(0, 4000);
      return settle(deps, job, entity, platform, p, "blocked", reason, p.query ?? undefined);
    }
    if (failed.length > 0) {
      const reason = `${failed.length} of ${p.targets.length} URLs could not be read`;
      return settle(deps, job, entity, platform, p, "sampled", reason, p.query ?? undefined);
    }
  }
  return settle(deps, job, entity, platform, p, p.partial ?? "exhaustive", p.partial ? note : null, p.query ?? undefined);
}

/** The coverage of a platform whose collector failed before reading a page, and why, in words. */
function nothingRead(upstream: UpstreamError | undefined, message: string): ["blocked" | "unknown", string] {
  switch (upstream?.problem) {
    case "refused":
      return ["blocked", `the upstream refused: ${message}`];
    case "unreachable":
      return ["unknown", `the upstream could not be reached: ${message}`];
    case "timed_out":
      return ["unknown", `the upstream did not answer in time: ${message}`];
    case "rate_limited":
      return ["unknown", `the upstream's rate limit did not lift in time: ${message}`];
    case "unavailable":
      return ["unknown", `the upstream was unavailable: ${message}`];
    default:
      return ["unknown", message];
  }
}

async function settle(
  deps: RunDeps,
  job: JobContext,
  entity: { id: string },
  platform: string,
  p: PlatformProgress,
  state: "exhaustive" | "bounded" | "sampled" | "blocked" | "unknown",
  reason: string | null,
  query?: string,
): Promise<PlatformOutcome> {
  p.coverage_state = state;
  p.reason = reason;
  p.status = state === "blocked" ? "blocked" : p.error ? "failed" : "completed";
  p.finished_at = new Date().toISOString();
  const targets =
    p.targets.length > 0
      ? p.targets.slice(0, 200).map((t) => ({ ...t }))
      : [
          {
            target: (query || platform).slice(0, 2000),
            target_type: query ? "search_query" : "platform",
            status: state,
            items_found: p.found,
            items_stored: p.stored,
            cursor_start: p.cursor_start ?? undefined,
            cursor_end: p.cursor ?? undefined,
            reached_end: p.reached_end,
            error: (p.error ?? (state === "blocked" ? reason : null))?.slice(0, 5000) ?? undefined,
          },
        ];
  const coverage = CoverageInputSchema.parse({
    coverage_state: state,
    collector: platform,
    collection_scope: collectionScope(job.depth),
    run_id: job.id,
    query: query?.slice(0, 5000),
    started_at: p.started_at,
    finished_at: p.finished_at,
    targets,
    totals: { found: p.found, stored: p.stored, inserted: p.inserted, deduplicated: p.deduplicated, pages: p.pages },
    notes: reason?.slice(0, 5000),
  });
  // One statement: the fenced progress write, and the coverage record only if the fence held (a run
  // that lost the job records nothing).
  const recorded = await recordCoverageIf(
    deps.pool,
    entity,
    coverage,
    platformProgressUpdate(job.id, job.fence, platform, p, job.completesOnSettle),
  );
  if (!recorded) {
    // The job was cancelled meanwhile (its platform stays `cancelled`, with this run's counts and no
    // coverage record: JobCancelled), or another run took it over (FenceLost).
    const unsettled = { ...p, status: "running" as const, coverage_state: null, reason: null, finished_at: null };
    await savePlatformProgress(deps.db, job.id, job.fence, platform, unsettled);
    throw new FenceLost(job.id);
  }
  return "settled";
}
