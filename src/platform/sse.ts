import type { Response } from "express";

/**
 * Server-sent events over an Express response: `id:` on every event (so clients can
 * resume with Last-Event-ID), `event:` + one `data:` line of JSON, a `: ping` comment
 * every `heartbeatMs` (the first one after a random part of it) to keep proxies from
 * closing an idle stream, and no buffering (`X-Accel-Buffering: no`, Nagle off).
 *
 * A client that stops reading cannot make the server hold its stream in memory: the
 * stream is dropped when more than `maxBufferedBytes` wait unsent in the process, when
 * its backlog has not drained at all across a whole heartbeat interval, or when an
 * ended stream's last bytes are still unsent two intervals later. The client resumes
 * with Last-Event-ID.
 */
export const SSE_MAX_BUFFERED_BYTES = 1024 * 1024;
export interface SseStream {
  send(id: number, event: string, data: unknown): void;
  comment(text: string): void;
  end(): void;
  readonly closed: boolean;
  /** True while written bytes wait in the process for a slow client (past the buffer's high-water mark). */
  readonly backlogged: boolean;
  /** Resolves when the backlog has drained, or the stream closed. */
  drained(): Promise<void>;
  /** Called once when the stream ends, whether the client left or `end()` was called. */
  onClose(listener: () => void): void;
}

export function openSse(
  res: Response,
  options: { heartbeatMs: number; headers?: Record<string, string>; onTick?: () => void; maxBufferedBytes?: number },
): SseStream {
  const maxBuffered = options.maxBufferedBytes ?? SSE_MAX_BUFFERED_BYTES;
  res.status(200);
  res.set({
    "Content-Type": "text/event-stream; charset=utf-8",
    "Cache-Control": "no-cache, no-transform",
    Connection: "keep-alive",
    "X-Accel-Buffering": "no",
    ...(options.headers ?? {}),
  });
  res.flushHeaders();
  res.socket?.setNoDelay(true);

  let closed = false;
  const listeners: (() => void)[] = [];
  const drainWaiters: (() => void)[] = [];
  const finish = () => {
    if (closed) return;
    closed = true;
    clearTimeout(heartbeat);
    clearInterval(heartbeat);
    for (const waiter of drainWaiters.splice(0)) waiter();
    for (const listener of listeners.splice(0)) listener();
  };
  /** Drops a client that is not reading; what it missed is replayed when it resumes. */
  const drop = () => {
    finish();
    res.destroy();
  };
  // Backlog: a write found the buffer over its high-water mark and it has not drained since.
  let backlog = false;
  let drains = 0;
  res.on("drain", () => {
    backlog = false;
    drains++;
    for (const waiter of drainWaiters.splice(0)) waiter();
  });
  const write = (text: string) => {
    if (!res.write(text)) backlog = true;
    if (res.writableLength > maxBuffered) drop();
  };
  let backlogAtTick = false;
  let drainsAtTick = 0;
  const tick = () => {
    if (closed) return;
    // A backlog at the last beat and at this one, with no drain between: the client has stalled.
    if (backlog && backlogAtTick && drains === drainsAtTick) return drop();
    backlogAtTick = backlog;
    drainsAtTick = drains;
    write(": ping\n\n");
    if (!closed) options.onTick?.();
  };
  // The first beat comes at a random point of the interval, so streams opened together
  // (and their onTick work) do not beat in step.
  let heartbeat: NodeJS.Timeout = setTimeout(
    () => {
      tick();
      heartbeat = setInterval(tick, options.heartbeatMs);
      heartbeat.unref();
    },
    Math.ceil(Math.random() * options.heartbeatMs),
  );
  heartbeat.unref();
  res.on("close", finish);
  // The client may already have gone (while the caller was still preparing the stream).
  if (res.destroyed || !res.socket || res.socket.destroyed) queueMicrotask(finish);

  return {
    send(id, event, data) {
      if (closed) return;
      write(`id: ${id}\nevent: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
    },
    comment(text) {
      if (closed) return;
      write(`: ${text.replace(/[\r\n]+/g, " ")}\n\n`);
    },
    end() {
      if (closed) return;
      res.end();
      finish();
      // A client that never reads the end would keep the socket and its bytes for ever.
      if (!res.writableFinished) {
        const linger = setTimeout(() => res.destroy(), options.heartbeatMs * 2);
        linger.unref();
        res.once("finish", () => clearTimeout(linger));
        res.once("close", () => clearTimeout(linger));
      }
    },
    get closed() {
      return closed;
    },
    get backlogged() {
      return backlog && !closed;
    },
    drained() {
      if (!backlog || closed) return Promise.resolve();
      return new Promise<void>((resolve) => drainWaiters.push(resolve));
    },
    onClose(listener) {
      if (closed) listener();
      else listeners.push(listener);
    },
  };
}

/** The largest event id a stream can send (sequence numbers are stored as 32-bit integers). */
export const MAX_EVENT_ID = 2_147_483_647;

/**
 * Reads a Last-Event-ID value (header or query). A non-negative integer is the last event
 * the client has; one beyond any event id reads as the largest, so the client resumes after
 * the end (never from the start). Anything else reads as 0.
 */
export function parseLastEventId(value: unknown): number {
  const text = Array.isArray(value) ? value[0] : value;
  if (typeof text !== "string" || !/^\d+$/.test(text.trim())) return 0;
  return Math.min(Number(text.trim()), MAX_EVENT_ID);
}
