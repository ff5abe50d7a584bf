import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";
import type { Queues } from "./queues.js";
import type { ReadRouting } from "./replicas.js";

/** Prometheus metrics of one web process: HTTP latency, queue depth per state, read replicas' state. */
export function createMetrics(queues: Queues, reads?: ReadRouting) {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });

  const httpDuration = new Histogram({
    name: "http_request_duration_seconds",
    help: "HTTP request duration by route template, method and status",
    labelNames: ["method", "route", "status"] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });

  const httpErrors = new Counter({
    name: "http_errors_total",
    help: "HTTP answers with status >= 500",
    labelNames: ["route", "status"] as const,
    registers: [registry],
  });

  new Gauge({
    name: "queue_jobs",
    help: "Jobs per queue and state (waiting, active, delayed, failed, completed)",
    labelNames: ["queue", "state"] as const,
    registers: [registry],
    async collect() {
      this.reset();
      await Promise.all(
        queues.all().map(async (queue) => {
          const counts = await queue.getJobCounts("waiting", "active", "delayed", "failed", "completed", "prioritized");
          for (const [state, count] of Object.entries(counts)) this.set({ queue: queue.name, state }, count);
        }),
      ).catch(() => {});
    },
  });

  // Finished jobs per queue, as the workers record them in Redis (BullMQ metrics; every
  // worker started by workers/runtime.ts records them), so any web process can serve them.
  const seen = new Map<string, number>();
  new Counter({
    name: "queue_jobs_finished_total",
    help: "Jobs finished per queue and outcome (completed, failed), as recorded by the workers",
    labelNames: ["queue", "outcome"] as const,
    registers: [registry],
    async collect() {
      await Promise.all(
        queues.all().flatMap((queue) =>
          (["completed", "failed"] as const).map(async (outcome) => {
            const total = (await queue.getMetrics(outcome, 0, 0)).meta.count;
            const key = `${queue.name}:${outcome}`;
            const delta = total - (seen.get(key) ?? 0);
            seen.set(key, total);
            if (delta > 0) this.inc({ queue: queue.name, outcome }, delta);
          }),
        ),
      ).catch(() => {});
    },
  });

  if (reads && reads.replicaCount > 0) {
    new Gauge({
      name: "db_replica_healthy",
      help: "1 when the read replica passed its last check (answering, a standby, within DATABASE_REPLICA_MAX_LAG_MS), else 0",
      labelNames: ["replica"] as const,
      registers: [registry],
      collect() {
        for (const s of reads.status()) this.set({ replica: String(s.index) }, s.healthy ? 1 : 0);
      },
    });
    new Gauge({
      name: "db_replica_lag_seconds",
      help: "How far behind the primary the read replica's last check found it (a lower bound; absent while it does not answer)",
      labelNames: ["replica"] as const,
      registers: [registry],
      collect() {
        this.reset();
        for (const s of reads.status()) if (s.lagMs !== null) this.set({ replica: String(s.index) }, s.lagMs / 1000);
      },
    });
  }

  return { registry, httpDuration, httpErrors };
}
export type Metrics = ReturnType<typeof createMetrics>;
