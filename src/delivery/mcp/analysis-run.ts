import { setTimeout as sleep } from "node:timers/promises";
import { analysisChannel, eventsAfter, type StoredEvent, TERMINAL_EVENTS } from "../../insights/analysis/events.js";
import { submitAnalysis } from "../../insights/analysis/jobs.js";
import { type RunInput, TERMINAL_STATUSES } from "../../insights/analysis/schemas.js";
import type { AppDeps } from "../../platform/deps.js";

/**
 * `analyze` action run: what `POST /agent/v1/analysis/run` does, with the stream read here
 * instead of relayed. The analysis is created (or found again by its request_id), the
 * analysis's channel subscribed, then its job queued, exactly as the route does; the stored
 * events are read in order until the terminal one, which is the tool's answer. Each
 * `progress` event becomes an MCP progress notification (0–100). Live messages only wake
 * the reader: the store is the record, so a late start or a lost publish misses nothing,
 * and an idle heartbeat reads the store too. A client that leaves stops the reading, not
 * the analysis.
 */
export type AnalysisProgress = (progress: number, total: number, message: string) => Promise<void>;

export async function runAnalysis(
  deps: AppDeps,
  userId: string,
  input: RunInput,
  options: { signal: AbortSignal; progress: AnalysisProgress },
): Promise<StoredEvent> {
  const { analysis } = await submitAnalysis(deps, userId, input);

  let wake: (() => void) | undefined;
  let pending = false;
  const nudge = () => {
    pending = true;
    wake?.();
  };
  const unsubscribe = await deps.pubsub.subscribe(analysisChannel(deps.config.REDIS_PREFIX, analysis.id), nudge);
  try {
    let last = 0;
    let reported = 0;
    for (;;) {
      options.signal.throwIfAborted();
      pending = false;
      for (const event of await eventsAfter(deps.db, analysis.id, last)) {
        last = event.seq;
        if (TERMINAL_EVENTS.has(event.event)) {
          if (event.event === "result" && reported < 100) await options.progress(100, 100, "result");
          return event;
        }
        const fraction = event.event === "progress" ? Number(event.data.progress) : Number.NaN;
        const percent = Math.min(99, Math.round(fraction * 100));
        if (Number.isFinite(percent) && percent > reported) {
          reported = percent;
          await options.progress(percent, 100, String(event.data.step ?? "progress"));
        }
      }
      if (pending) continue;
      // Nothing new: an analysis that ended without a terminal event (it never ran) has no more to say.
      const row = await deps.db.analysis.findUnique({ where: { id: analysis.id }, select: { status: true, error: true } });
      if (!row || (TERMINAL_STATUSES as readonly string[]).includes(row.status)) {
        const rest = await eventsAfter(deps.db, analysis.id, last);
        if (rest.length > 0) continue;
        return {
          seq: last + 1,
          event: "error",
          data: { analysis_id: analysis.id, status: "failed", detail: row?.error ?? "The analysis ended without a result." },
        };
      }
      await waitForNews(deps.config.SSE_HEARTBEAT_MS, options.signal, (resolve) => {
        wake = resolve;
        if (pending) resolve();
      });
      wake = undefined;
    }
  } finally {
    await unsubscribe();
  }
}

/** Resolves on a nudge, after `ms`, or rejects when the signal aborts. */
async function waitForNews(ms: number, signal: AbortSignal, arm: (resolve: () => void) => void): Promise<void> {
  const controller = new AbortController();
  const onAbort = () => controller.abort();
  signal.addEventListener("abort", onAbort, { once: true });
  try {
    await Promise.race([
      sleep(ms, undefined, { signal: controller.signal }).catch(() => undefined),
      new Promise<void>((resolve) => arm(resolve)),
    ]);
  } finally {
    controller.abort();
    signal.removeEventListener("abort", onAbort);
  }
  signal.throwIfAborted();
}
