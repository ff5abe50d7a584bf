import { Counter, Gauge, type Registry } from "prom-client";
import type { Db } from "../../platform/db.js";
import { SKIP_REASONS } from "./schemas.js";
import { DISPATCHER_NAME } from "./service.js";

/**
 * Routine metrics, read at scrape time from PostgreSQL, where the dispatcher records every
 * occurrence, so any web process serves the same figures whichever worker dispatched:
 * - `routine_occurrences_total{outcome, reason}`: `dispatched`; `skipped` with the reason
 *   (price_above_ceiling, insufficient_credits, skill_removed, access_revoked); `failed`
 *   (reason dispatch_error): dispatch attempts that failed, each leaving its occurrence due
 *   for the next pass;
 * - `routine_scheduler_last_seen_timestamp_seconds`: when a dispatch pass last finished.
 */
export function registerRoutineMetrics(registry: Registry, db: Db): void {
  // A counter only goes up: each scrape adds what the stored totals grew by since the last one.
  const seen = new Map<string, number>();

  const occurrences = new Counter({
    name: "routine_occurrences_total",
    help: "Routine occurrences dispatched, skipped (by reason), and failed dispatch attempts",
    labelNames: ["outcome", "reason"] as const,
    registers: [registry],
    async collect() {
      const [handled, failures] = await Promise.all([
        db.$queryRaw<{ outcome: string; reason: string | null; n: bigint }[]>`
          SELECT outcome, reason, count(*)::bigint AS n FROM routine_occurrences GROUP BY outcome, reason`,
        db.$queryRaw<{ n: bigint }[]>`SELECT COALESCE(SUM(dispatch_errors), 0)::bigint AS n FROM skill_routines`,
      ]).catch(() => [[], []] as const);
      const totals = handled.map((row) => ({ outcome: row.outcome, reason: row.reason ?? "", n: Number(row.n) }));
      if (failures[0]) totals.push({ outcome: "failed", reason: "dispatch_error", n: Number(failures[0].n) });
      for (const { outcome, reason, n } of totals) {
        const key = `${outcome}:${reason}`;
        const before = seen.get(key) ?? 0;
        seen.set(key, n);
        if (n > before) this.inc({ outcome, reason }, n - before);
      }
    },
  });
  // Every outcome is present from the first scrape, at zero until it happens.
  occurrences.inc({ outcome: "dispatched", reason: "" }, 0);
  for (const reason of SKIP_REASONS) occurrences.inc({ outcome: "skipped", reason }, 0);
  occurrences.inc({ outcome: "failed", reason: "dispatch_error" }, 0);

  new Gauge({
    name: "routine_scheduler_last_seen_timestamp_seconds",
    help: "When a routine dispatch pass last finished (Unix time; 0 when none ever did)",
    registers: [registry],
    async collect() {
      const row = await db.routineDispatcher.findUnique({ where: { name: DISPATCHER_NAME } }).catch(() => null);
      this.set(row ? row.lastSeenAt.getTime() / 1000 : 0);
    },
  });
}
