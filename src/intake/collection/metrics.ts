import { Gauge, type Registry } from "prom-client";
import type { Db } from "../../platform/db.js";

/**
 * Collection job metrics, served by the web process at `/metrics` and computed at scrape
 * time from Postgres (the system of record), so they are right whichever worker ran the
 * jobs and survive restarts:
 * - `collection_jobs{status}`: jobs per stored status (queued, running, completed, failed);
 * - `collection_jobs_oldest_unfinished_seconds`: age of the least recently updated
 *   queued or running job (a growing value means jobs are stuck: see requeue-stalled);
 * - `collection_platform_outcomes{platform, coverage_state}`: platforms settled by
 *   collection jobs in the last 24 hours, by the coverage they recorded (a rising
 *   `blocked` count is an upstream or credential problem).
 * Queue depth per state and finished-job counters per queue come from the platform's
 * own queue metrics (`queue_jobs`, `queue_jobs_finished_total`).
 */
export function registerCollectionMetrics(registry: Registry, db: Db): void {
  new Gauge({
    name: "collection_jobs",
    help: "Collection jobs per stored status",
    labelNames: ["status"] as const,
    registers: [registry],
    async collect() {
      const rows = await db.$queryRaw<{ status: string; n: number }[]>`
        SELECT status, count(*)::int AS n FROM collection_jobs GROUP BY status`.catch(() => undefined);
      if (!rows) return;
      this.reset();
      for (const status of ["queued", "running", "completed", "failed"]) this.set({ status }, 0);
      for (const row of rows) this.set({ status: row.status }, row.n);
    },
  });

  new Gauge({
    name: "collection_jobs_oldest_unfinished_seconds",
    help: "Seconds since the least recently updated queued or running collection job changed (0 when none)",
    registers: [registry],
    async collect() {
      const rows = await db.$queryRaw<{ age: number | null }[]>`
        SELECT extract(epoch FROM now() - min(updated_at))::float8 AS age
        FROM collection_jobs WHERE status IN ('queued', 'running')`.catch(() => undefined);
      if (rows) this.set(rows[0]?.age ?? 0);
    },
  });

  new Gauge({
    name: "collection_platform_outcomes",
    help: "Platforms settled by collection jobs in the last 24 hours, by recorded coverage state",
    labelNames: ["platform", "coverage_state"] as const,
    registers: [registry],
    async collect() {
      const rows = await db.$queryRaw<{ collector: string; coverage_state: string; n: number }[]>`
        SELECT collector, coverage_state, count(*)::int AS n FROM coverage_records
        WHERE collection_scope LIKE 'collection_job:%' AND updated_at > now() - interval '24 hours'
        GROUP BY collector, coverage_state`.catch(() => undefined);
      if (!rows) return;
      this.reset();
      for (const row of rows) this.set({ platform: row.collector, coverage_state: row.coverage_state }, row.n);
    },
  });
}
