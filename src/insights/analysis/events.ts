import type { DbTx } from "../../platform/db.js";
import type { AppDeps } from "../../platform/deps.js";
import { publish } from "../../platform/redis.js";

/**
 * The analysis event store. Every event is written to `analysis_events` with the next
 * sequence number of its analysis BEFORE it is published on the analysis's Redis
 * channel, so a client that arrives late (or loses a message) reads the rest from the
 * database. Postgres is the record; the channel only carries the news.
 */
export const TERMINAL_EVENTS: ReadonlySet<string> = new Set(["result", "error"]);

export interface StoredEvent {
  seq: number;
  event: string;
  data: Record<string, unknown>;
}

export type EventDeps = Pick<AppDeps, "db" | "redis" | "config" | "logger">;

export const analysisChannel = (prefix: string, analysisId: string) => `${prefix}:analysis:${analysisId}`;

/**
 * Stores an event (data always carries `analysis_id`) and then publishes it. `alongside`
 * runs in the same transaction, so a row update and its event commit together. A failed
 * publish is logged, not thrown: the event is stored, and relays read stored events
 * whenever they see a gap and on every heartbeat.
 */
export async function appendEvent(
  deps: EventDeps,
  analysisId: string,
  event: string,
  data: Record<string, unknown>,
  alongside?: (tx: DbTx) => Promise<void>,
): Promise<StoredEvent> {
  const payload = { analysis_id: analysisId, ...data };
  // One statement takes the next number from the analysis row's counter (the row lock
  // orders concurrent writers) and inserts the event, so numbers are gap-free and commit
  // in order; the unique (analysis_id, seq) backs it up.
  const insert = async (db: DbTx | AppDeps["db"]) => {
    const rows = await db.$queryRaw<{ seq: number }[]>`
      WITH next AS (
        UPDATE analyses SET event_seq = event_seq + 1 WHERE id = ${analysisId}::uuid RETURNING event_seq
      )
      INSERT INTO analysis_events (analysis_id, seq, event, data)
      SELECT ${analysisId}::uuid, next.event_seq, ${event}, ${JSON.stringify(payload)}::jsonb FROM next
      RETURNING seq`;
    const seq = rows[0]?.seq;
    if (seq === undefined) throw new Error(`Analysis ${analysisId} does not exist`);
    return Number(seq);
  };
  const seq = alongside
    ? await deps.db.$transaction(async (tx) => {
        await alongside(tx);
        return insert(tx);
      })
    : await insert(deps.db);
  const stored: StoredEvent = { seq, event, data: payload };
  try {
    await publish(deps.redis, analysisChannel(deps.config.REDIS_PREFIX, analysisId), JSON.stringify(stored));
  } catch (err) {
    deps.logger.warn({ err, analysisId, seq, event }, "analysis event stored but not published; relays will read it from the store");
  }
  return stored;
}

/** Stored events with `afterSeq < seq < beforeSeq`, in order. */
export async function eventsAfter(db: AppDeps["db"], analysisId: string, afterSeq: number, beforeSeq?: number): Promise<StoredEvent[]> {
  const rows = await db.analysisEvent.findMany({
    where: { analysisId, seq: { gt: afterSeq, ...(beforeSeq === undefined ? {} : { lt: beforeSeq }) } },
    orderBy: { seq: "asc" },
    select: { seq: true, event: true, data: true },
  });
  return rows.map((r) => ({ seq: r.seq, event: r.event, data: r.data as Record<string, unknown> }));
}

export async function hasTerminalEvent(db: AppDeps["db"] | DbTx, analysisId: string): Promise<boolean> {
  const row = await db.analysisEvent.findFirst({ where: { analysisId, event: { in: [...TERMINAL_EVENTS] } }, select: { seq: true } });
  return row !== null;
}

/** Parses a message from the channel; anything malformed reads as undefined. */
export function parseEventMessage(message: string): StoredEvent | undefined {
  try {
    const value = JSON.parse(message) as Partial<StoredEvent>;
    if (typeof value.seq !== "number" || typeof value.event !== "string" || typeof value.data !== "object" || value.data === null)
      return undefined;
    return value as StoredEvent;
  } catch {
    return undefined;
  }
}
