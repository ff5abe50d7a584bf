import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createParser } from "eventsource-parser";
import type { Harness } from "../helpers/harness.js";

/**
 * A streaming client as agents use one: fetch over a real socket, the body parsed with
 * eventsource-parser as it arrives. Events and comments are collected; `until` awaits a
 * condition on them (bounded by a deadline), `closed` resolves when the server ends the
 * stream, `abort` disconnects mid-stream.
 */
export interface ParsedEvent {
  id: number;
  event: string;
  data: Record<string, unknown>;
}

export interface Stream {
  status: number;
  headers: Headers;
  events: ParsedEvent[];
  comments: string[];
  /** The JSON body, for a response that was not a stream (an error). */
  json: unknown;
  until: (predicate: (events: ParsedEvent[], comments: string[]) => boolean, timeoutMs?: number) => Promise<void>;
  closed: Promise<void>;
  abort: () => void;
}

export async function listen(h: Harness): Promise<{ baseUrl: string; server: Server; close: () => Promise<void> }> {
  const server = createServer(h.app);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    baseUrl,
    server,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

export async function openStream(
  url: string,
  options: { method?: "GET" | "POST"; token: string; body?: unknown; headers?: Record<string, string> },
): Promise<Stream> {
  const controller = new AbortController();
  const res = await fetch(url, {
    method: options.method ?? "GET",
    headers: {
      authorization: `Bearer ${options.token}`,
      accept: "text/event-stream",
      ...(options.body === undefined ? {} : { "content-type": "application/json" }),
      ...(options.headers ?? {}),
    },
    ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
    signal: controller.signal,
  });
  const events: ParsedEvent[] = [];
  const comments: string[] = [];
  const waiters = new Set<() => void>();
  const notify = () => {
    for (const w of [...waiters]) w();
  };
  let ended = false;

  if (!res.headers.get("content-type")?.startsWith("text/event-stream")) {
    const json = await res.json().catch(() => null);
    return {
      status: res.status,
      headers: res.headers,
      events,
      comments,
      json,
      until: async () => {},
      closed: Promise.resolve(),
      abort: () => {},
    };
  }

  const parser = createParser({
    onEvent: (e) => {
      events.push({ id: Number(e.id), event: e.event ?? "message", data: JSON.parse(e.data) as Record<string, unknown> });
      notify();
    },
    onComment: (c) => {
      comments.push(c.trim());
      notify();
    },
  });
  const closed = (async () => {
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        parser.feed(value);
      }
    } catch {
      // aborted by the client
    } finally {
      ended = true;
      notify();
    }
  })();

  const until: Stream["until"] = (predicate, timeoutMs = 20_000) =>
    new Promise<void>((resolve, reject) => {
      const check = () => {
        if (predicate(events, comments)) {
          cleanup();
          resolve();
        } else if (ended) {
          cleanup();
          reject(new Error(`stream ended before the condition held; events: ${events.map((e) => `${e.id}:${e.event}`).join(", ")}`));
        }
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(new Error(`timed out; events so far: ${events.map((e) => `${e.id}:${e.event}`).join(", ")}`));
      }, timeoutMs);
      const cleanup = () => {
        clearTimeout(timer);
        waiters.delete(check);
      };
      waiters.add(check);
      check();
    });

  return { status: res.status, headers: res.headers, events, comments, json: undefined, until, closed, abort: () => controller.abort() };
}

/** Runs an analysis of one entity through the stream route and answers its terminal `result` event's data. */
export async function runAnalysis<R>(
  baseUrl: string,
  tenant: { token: string; entityId: string },
  question: string,
  depth: string,
): Promise<{ status: string; data: R }> {
  const stream = await openStream(`${baseUrl}/agent/v1/analysis/run`, {
    method: "POST",
    token: tenant.token,
    body: { question, entity_id: tenant.entityId, depth },
  });
  await stream.closed;
  const result = stream.events.at(-1);
  if (result?.event !== "result") throw new Error(`the run ended with ${JSON.stringify(result)}`);
  return result.data as { status: string; data: R };
}
