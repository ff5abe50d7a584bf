import type { Response } from "express";

/**
 * Server-sent events over an Express response: `id:` on every event (so clients can
 * resume with Last-Event-ID), `event:` + one `data:` line of JSON, a `: ping` comment
 * every `heartbeatMs` (the first one after a random part of it) to keep proxies from
 * closing an idle stream, and no buffering (`X-Accel-Buffering: no`, Nagle off).
 */
export interface SseStream {
  send(id: number, event: string, data: unknown): void;
  comment(text: string): void;
  end(): void;
  readonly closed: boolean;
  /** Called once when the stream ends, whether the client left or `end()` was called. */
  onClose(listener: () => void): void;
}

export function openSse(res: Response, options: { heartbeatMs: number; headers?: Record<string, string>; onTick?: () => void }): SseStream {
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
  const finish = () => {
    if (closed) return;
    closed = true;
    clearTimeout(heartbeat);
    clearInterval(heartbeat);
    for (const listener of listeners.splice(0)) listener();
  };
  const tick = () => {
    if (closed) return;
    res.write(": ping\n\n");
    options.onTick?.();
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
      res.write(`id: ${id}\nevent: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
    },
    comment(text) {
      if (closed) return;
      res.write(`: ${text.replace(/[\r\n]+/g, " ")}\n\n`);
    },
    end() {
      if (closed) return;
      res.end();
      finish();
    },
    get closed() {
      return closed;
    },
    onClose(listener) {
      if (closed) listener();
      else listeners.push(listener);
    },
  };
}

/** Reads a Last-Event-ID value (header or query); anything but a non-negative integer reads as 0. */
export function parseLastEventId(value: unknown): number {
  const text = Array.isArray(value) ? value[0] : value;
  if (typeof text !== "string" || !/^\d{1,9}$/.test(text.trim())) return 0;
  return Number(text.trim());
}
