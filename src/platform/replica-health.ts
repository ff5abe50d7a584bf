import type { Db } from "./db.js";
import type { Logger } from "./logger.js";
import { within } from "./timeout.js";

/**
 * Which read replicas may answer replica reads right now: each one that answers its check
 * within the timeout, is still a standby, and has replayed the primary's WAL to within
 * `maxLagMs`. A replica that is down, promoted or too far behind is skipped until a later
 * check finds it well again; with none well, replica reads go to the primary.
 *
 * Lag is measured against the primary's own WAL position, not the replica's replay
 * timestamp (which grows while the primary is idle, and says nothing when the replica has
 * lost its connection to the primary): each check reads `pg_current_wal_lsn()` on the primary
 * and remembers when it first saw each position; a replica whose `pg_last_wal_replay_lsn()` is
 * short of a position seen at time t is at least `now − t` behind. The figure is a lower bound
 * good to one check interval.
 */
export interface ReplicaState {
  index: number;
  /** True once the replica passed its last check (false before the first). */
  healthy: boolean;
  /** How far behind the primary the last check found it (ms; null when it did not answer). */
  lagMs: number | null;
  /** Why it is skipped, when it is. */
  problem: string | null;
}

export interface ReplicaHealthOptions {
  intervalMs: number;
  maxLagMs: number;
  /** A check that takes longer than this counts as no answer. */
  timeoutMs: number;
  logger: Logger;
}

/** A WAL position (`16/B374D848`) as a number. */
export function parseLsn(text: string): bigint {
  const [hi = "0", lo = "0"] = text.split("/");
  return (BigInt(`0x${hi}`) << 32n) + BigInt(`0x${lo}`);
}

/** Primary positions remembered (one per check that found the primary moved on). */
const MAX_SAMPLES = 1000;

/** A replica's problem before its first check. */
const NOT_CHECKED = "not checked yet";

export class ReplicaHealth {
  readonly states: ReplicaState[];
  private readonly samples: { lsn: bigint; at: number }[] = [];
  private timer: NodeJS.Timeout | undefined;
  private started: Promise<void> | undefined;
  private stopped = false;
  /** Checks still waiting for an answer: a replica that hangs gets no second check piled on. */
  private readonly pending = new Set<number>();

  constructor(
    private readonly primary: Db,
    private readonly replicas: Db[],
    private readonly options: ReplicaHealthOptions,
  ) {
    this.states = replicas.map((_, index) => ({ index, healthy: false, lagMs: null, problem: NOT_CHECKED }));
  }

  /** Starts the periodic checks on first use; resolves once the first check is done. */
  start(): Promise<void> {
    this.started ??= this.check().then(() => {
      if (!this.stopped) this.schedule();
    });
    return this.started;
  }

  healthy(): number[] {
    return this.states.filter((s) => s.healthy).map((s) => s.index);
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  private schedule(): void {
    this.timer = setTimeout(() => {
      void this.check().finally(() => {
        if (!this.stopped) this.schedule();
      });
    }, this.options.intervalMs);
    this.timer.unref();
  }

  /** One round: the primary's position, then every replica's. Never throws. */
  async check(): Promise<void> {
    const { timeoutMs, maxLagMs } = this.options;
    try {
      const [row] = await within(this.primary.$queryRaw<{ lsn: string }[]>`SELECT pg_current_wal_lsn()::text AS lsn`, timeoutMs);
      const lsn = parseLsn(row?.lsn ?? "0/0");
      const last = this.samples.at(-1);
      if (!last || lsn > last.lsn) this.samples.push({ lsn, at: Date.now() });
      if (this.samples.length > MAX_SAMPLES) this.samples.splice(0, this.samples.length - MAX_SAMPLES);
    } catch {
      // The primary did not answer: the replicas are judged against the positions already seen.
    }
    await Promise.all(
      this.replicas.map(async (replica, index) => {
        if (this.pending.has(index)) {
          this.record(index, { healthy: false, lagMs: null, problem: "does not answer: the previous check is still waiting" });
          return;
        }
        let next: Omit<ReplicaState, "index">;
        try {
          this.pending.add(index);
          // One promise for the query (Prisma's are lazy), watched twice: for the timeout and for its end.
          const query = Promise.resolve(
            replica.$queryRaw<{ lsn: string | null; standby: boolean }[]>`
              SELECT pg_last_wal_replay_lsn()::text AS lsn, pg_is_in_recovery() AS standby`,
          );
          void query.then(
            () => this.pending.delete(index),
            () => this.pending.delete(index),
          );
          const [row] = await within(query, timeoutMs);
          if (!row?.standby || !row.lsn) {
            next = { healthy: false, lagMs: null, problem: "not a standby (promoted, or not a replica)" };
          } else {
            const replayed = parseLsn(row.lsn);
            const behind = this.samples.find((s) => s.lsn > replayed);
            const lagMs = behind ? Date.now() - behind.at : 0;
            next =
              lagMs > maxLagMs
                ? { healthy: false, lagMs, problem: `replay is at least ${lagMs} ms behind the primary (limit ${maxLagMs} ms)` }
                : { healthy: true, lagMs, problem: null };
          }
        } catch (err) {
          next = { healthy: false, lagMs: null, problem: `does not answer: ${(err as Error).message.split("\n")[0]}` };
        }
        this.record(index, next);
      }),
    );
  }

  private record(index: number, next: Omit<ReplicaState, "index">): void {
    const state = this.states[index] as ReplicaState;
    const changed = state.healthy !== next.healthy;
    const wasChecked = state.problem !== NOT_CHECKED;
    Object.assign(state, next);
    if (!changed && wasChecked) return;
    if (next.healthy) this.options.logger.info({ replica: index, lag_ms: next.lagMs }, "read replica in use");
    else
      this.options.logger.warn(
        { replica: index, problem: next.problem },
        "read replica skipped; its reads go to the other replicas or the primary",
      );
  }
}
