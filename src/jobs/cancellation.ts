import type { Db } from "../platform/db.js";
import type { JobKind } from "./events.js";
import { KIND_TABLES } from "./states.js";

/**
 * How a running job learns that it was cancelled. The cancel itself is a row transition
 * (`queued|running → cancelled`, see states.ts); a worker holding the job watches its row and
 * stops at the next checkpoint (between pages, platforms, notes and steps). The watch reads
 * one column every `intervalMs`, so a cancel takes effect within that interval plus the
 * length of one step; in-flight HTTP calls of the collectors are aborted through `signal`.
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
