/**
 * The client side of bench/sse, in a process of its own so that parsing 200 streams does
 * not compete with the server for the same event loop. Driven over IPC by index.ts:
 * `open` opens one SSE stream per analysis id; `collect` answers every latency sample
 * (receipt time minus the `t` the publisher put in the event), clearing them.
 */
import { performance } from "node:perf_hooks";
import { createParser } from "eventsource-parser";

type Command = { type: "open"; base: string; token: string; ids: string[] } | { type: "collect" } | { type: "close" };

const now = () => performance.timeOrigin + performance.now();
const samples: number[] = [];
const aborts: AbortController[] = [];
const perSeq = new Map<number, number>();
let streams = 0;

async function open(base: string, token: string, id: string) {
  const abort = new AbortController();
  aborts.push(abort);
  const res = await fetch(`${base}/agent/v1/analysis/${id}/events`, {
    headers: { authorization: `Bearer ${token}`, accept: "text/event-stream" },
    signal: abort.signal,
  });
  if (res.status !== 200 || !res.body) throw new Error(`stream ${id}: HTTP ${res.status}`);
  const parser = createParser({
    onEvent: (event) => {
      const at = now();
      samples.push(at - (JSON.parse(event.data) as { t: number }).t);
      const seq = Number(event.id);
      const n = (perSeq.get(seq) ?? 0) + 1;
      perSeq.set(seq, n);
      if (n === streams) {
        perSeq.delete(seq);
        process.send?.({ type: "round", seq });
      }
    },
  });
  void (async () => {
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        parser.feed(value);
      }
    } catch {
      // aborted at the end of the run
    }
  })();
}

process.on("message", async (command: Command) => {
  if (command.type === "open") {
    streams = command.ids.length;
    await Promise.all(command.ids.map((id) => open(command.base, command.token, id)));
    process.send?.({ type: "opened" });
  } else if (command.type === "collect") {
    process.send?.({ type: "samples", samples: samples.splice(0) });
  } else {
    for (const a of aborts) a.abort();
    process.send?.({ type: "closed" }, () => process.exit(0));
  }
});
