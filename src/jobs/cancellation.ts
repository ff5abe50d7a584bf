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

/** When a watch first reads its row (a cancel that committed before it listened). */
const FIRST_READ_MS = 1_000;

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
 * The watch a worker keeps over one job: the job's end channel tells it of a cancel at once; the row is
 * read a second after the watch starts (a cancel announced before it listened) and every `pollMs` after.
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
  const listening = deps.pubsub
    .subscribe(endedChannel(deps.config.REDIS_PREFIX, kind, id), (state) => {
      if (state === "cancelled") void watch.check().catch(() => undefined);
    })
    .then((off) => {
      unsubscribe = off;
      if (stopped) void off();
    })
    // Redis refused the subscription: the row is still read every pollMs.
    .catch(() => undefined);
  // A cancel that committed between the claim and the subscription: one read a second in (jobs that
  // end sooner pay nothing), then every pollMs.
  const first = setTimeout(() => void listening.then(() => watch.check()).catch(() => undefined), FIRST_READ_MS);
  first.unref();
  return {
    ...watch,
    stop: () => {
      stopped = true;
      clearTimeout(first);
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
