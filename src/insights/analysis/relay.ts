import type { Response } from "express";
import type { AppDeps } from "../../platform/deps.js";
import { openSse, type SseStream } from "../../platform/sse.js";
import { analysisChannel, eventsAfter, parseEventMessage, type StoredEvent, TERMINAL_EVENTS } from "./events.js";
import { TERMINAL_STATUSES } from "./schemas.js";

/**
 * Relays one analysis's events to an SSE client: subscribe to the channel (buffering),
 * replay the stored events after `afterSeq`, then switch to live
 * messages. Every write goes through one ordered chain that skips sequence numbers
 * already sent and fills gaps from the store, so the client sees each event once, in
 * order, whether it came from the store or the channel. The relay ends after the
 * terminal event (`result` or `error`); a client that leaves drops the subscription and
 * nothing else (the analysis runs on).
 */
export interface RelayOptions {
  afterSeq: number;
  headers?: Record<string, string>;
}

export async function relayAnalysis(deps: AppDeps, res: Response, analysisId: string, options: RelayOptions): Promise<void> {
  let last = options.afterSeq;
  let live = false;
  let done = false;
  const buffered: StoredEvent[] = [];
  let sse: SseStream | undefined;
  let chain: Promise<void> = Promise.resolve();

  const unsubscribe = await deps.pubsub.subscribe(analysisChannel(deps.config.REDIS_PREFIX, analysisId), (message) => {
    const event = parseEventMessage(message);
    if (!event) return;
    if (live) enqueue(() => deliver(event));
    else buffered.push(event);
  });

  const finish = () => {
    if (done) return;
    done = true;
    void unsubscribe();
    sse?.end();
  };
  let wroteSinceTick = false;
  const write = (event: StoredEvent) => {
    if (done || event.seq <= last || !sse) return;
    sse.send(event.seq, event.event, event.data);
    last = event.seq;
    wroteSinceTick = true;
    if (TERMINAL_EVENTS.has(event.event)) finish();
  };
  const catchUp = async (beforeSeq?: number) => {
    if (done) return;
    for (const event of await eventsAfter(deps.db, analysisId, last, beforeSeq)) {
      write(event);
      // A long replay goes at the client's pace; a client that stops reading is dropped by the stream.
      if (sse?.backlogged) await sse.drained();
    }
  };
  const deliver = async (event: StoredEvent) => {
    if (done) return;
    if (event.seq <= last) {
      // Sent already, or the client resumed after it: a terminal event still ends the stream.
      if (TERMINAL_EVENTS.has(event.event)) finish();
      return;
    }
    if (event.seq > last + 1) await catchUp(event.seq);
    write(event);
  };
  const enqueue = (step: () => Promise<void>) => {
    chain = chain.then(step).catch((err: unknown) => {
      deps.logger.warn({ err, analysisId }, "analysis relay failed; closing the stream");
      finish();
    });
  };

  sse = openSse(res, {
    heartbeatMs: deps.config.SSE_HEARTBEAT_MS,
    ...(options.headers ? { headers: options.headers } : {}),
    // A heartbeat of an idle stream also reads the store, so an event whose publish was
    // lost still arrives (a busy stream notices a lost event by the gap it leaves).
    onTick: () => {
      if (wroteSinceTick) wroteSinceTick = false;
      else enqueue(() => catchUp());
    },
  });
  sse.onClose(() => {
    done = true;
    void unsubscribe();
  });

  enqueue(async () => {
    await catchUp();
    live = true;
    for (const event of buffered.splice(0)) await deliver(event);
    if (done) return;
    // An analysis that ended without a terminal event (it never ran) has nothing more to send.
    const row = await deps.db.analysis.findUnique({ where: { id: analysisId }, select: { status: true } });
    if (!row || (TERMINAL_STATUSES as readonly string[]).includes(row.status)) {
      await catchUp();
      finish();
    }
  });
  await chain;
}
