import pLimit, { type LimitFunction } from "p-limit";
import type { Registry } from "prom-client";
import { Gauge } from "prom-client";
import type { Db } from "../../platform/db.js";

/**
 * The ingest batches a process writes at once (`INGEST_WRITERS`): a batch past the limit waits in the
 * process, in arrival order, before it takes a connection or starts its transaction. Ten batches copied at
 * once cost PostgreSQL more CPU per row than two (their inserts contend for the same index pages, the
 * full-text index's pending list and the log), and hold ten of the pool's connections that the rest of the
 * API needs meanwhile; a few at a time store the same rows sooner (docs/benchmarks.md, "Batches that take
 * turns"). One limiter per database client, so every ingest path of a process shares it.
 */
const limiters = new WeakMap<Db, LimitFunction>();

export function ingestWriters(db: Db, concurrency: number): LimitFunction {
  let limit = limiters.get(db);
  if (!limit) {
    limit = pLimit(concurrency);
    limiters.set(db, limit);
  }
  return limit;
}

/** `ingest_batches{state}` at `/metrics`: the batches this process is writing and those waiting their turn. */
export function registerIngestMetrics(registry: Registry, db: Db, concurrency: number): void {
  new Gauge({
    name: "ingest_batches",
    help: "Ingest batches of this process being written (writing) and waiting for one of its INGEST_WRITERS (waiting)",
    labelNames: ["state"] as const,
    registers: [registry],
    collect() {
      const limit = ingestWriters(db, concurrency);
      this.set({ state: "writing" }, limit.activeCount);
      this.set({ state: "waiting" }, limit.pendingCount);
    },
  });
}
