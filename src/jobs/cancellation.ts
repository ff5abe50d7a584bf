import type { Db } from "../platform/db.js";
import type { PubSub, Unsubscribe } from "../platform/pubsub.js";
import { endedChannel } from "./channels.js";
import type { JobKind } from "./events.js";
import { KIND_TABLES } from "./states.js";

/**
 * How a running job learns that it was cancelled. The cancel itself is a row transition
 * (`queued|running → cancelled`, see states.ts), announced on the job's end channel (`jobEnded`);
 * a worker holding the job listens on that channel and stops at the next checkpoint (between
 * pages, platforms, notes and steps); in-flight HTTP calls are aborted through `signal`. A
 * message lost to a reconnect is caught by a slow read of the row (`SAFETY_POLL_MS`).
 */
export class JobCancelled extends Error {
  override name = "JobCancelled";
  constructor(readonly what: string) {
    super(`${what} was cancelled`);
  }
}

export type StatusReader = () => Promise<string | undefined>;

export interface CancelWatch {
  readonly signal: AbortSignal;
  /** Throws JobCancelled once the row says cancelled. */
  checkpoint: () => void;
  /** Reads the row now (a checkpoint that does not wait for the next tick). */
  check: () => Promise<void>;
  stop: () => void;
}

/**
 * How long a watch waits before it listens. Most jobs end sooner (a collection that reads one page, an
 * analysis of a small scope), and a job that ends before this pays no subscription and no read of its
 * row; a cancel that comes meanwhile is seen this long after the job started at most (and the job's
 * terminal write is fenced on its row's state either way, so a cancelled job never ends otherwise).
 */
export const LISTEN_AFTER_MS = 250;

/** How often a watch reads its row in case a cancel's announcement was lost (a Redis reconnect). */
export const SAFETY_POLL_MS = 10_000;

export function watchCancellation(what: string, readStatus: StatusReader, intervalMs = 500): CancelWatch {
  const controller = new AbortController();
  let stopped = false;
  const check = async () => {
    if (controller.signal.aborted || stopped) return;
    const status = await readStatus().catch(() => undefined);
    if (status === "cancelled") controller.abort(new JobCancelled(what));
  };
  const timer = setInterval(() => void check(), intervalMs);
  timer.unref();
  return {
    signal: controller.signal,
    checkpoint: () => {
      if (controller.signal.aborted) throw new JobCancelled(what);
    },
    check: async () => {
      await check();
      if (controller.signal.aborted) throw new JobCancelled(what);
    },
    stop: () => {
      stopped = true;
      clearInterval(timer);
    },
  };
}

/**
 * The watch a worker keeps over one job: from `LISTEN_AFTER_MS` in, the job's end channel tells it of a
 * cancel at once; the row is read once the subscription is confirmed (a cancel announced before the
 * watch listened) and every `pollMs` after.
 */
export function watchJob(
  deps: { db: Db; pubsub: Pick<PubSub, "subscribe">; config: { REDIS_PREFIX: string } },
  kind: JobKind,
  id: string,
  what: string,
  pollMs = SAFETY_POLL_MS,
): CancelWatch {
  const watch = watchCancellation(what, rowStatus(deps.db, kind, id), pollMs);
  let unsubscribe: Unsubscribe | undefined;
  let stopped = false;
  const listen = () =>
    void deps.pubsub
      .subscribe(endedChannel(deps.config.REDIS_PREFIX, kind, id), (state) => {
        if (state === "cancelled") void watch.check().catch(() => undefined);
      })
      .then((off) => {
        unsubscribe = off;
        if (stopped) void off();
      })
      // Redis refused the subscription: the row is still read now and every pollMs.
      .catch(() => undefined)
      .then(() => watch.check())
      .catch(() => undefined);
  const start = setTimeout(listen, LISTEN_AFTER_MS);
  start.unref();
  return {
    ...watch,
    stop: () => {
      stopped = true;
      clearTimeout(start);
      watch.stop();
      void unsubscribe?.();
    },
  };
}

/** A watch that never fires (code paths run outside a worker, e.g. in tests of one step). */
export const NEVER_CANCELLED: CancelWatch = {
  signal: new AbortController().signal,
  checkpoint: () => undefined,
  check: async () => undefined,
  stop: () => undefined,
};

/** Reads the status of one job's row (undefined: no such row). */
export const rowStatus =
  (db: Db, kind: JobKind, id: string): StatusReader =>
  async () => {
    const rows = await db.$queryRawUnsafe<{ status: string }[]>(`SELECT status FROM ${KIND_TABLES[kind]} WHERE id = $1::uuid`, id);
    return rows[0]?.status;
  };
