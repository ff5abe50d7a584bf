import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type AppDeps, closeDeps, createDeps } from "../../src/platform/deps.js";
import { Queues } from "../../src/platform/queues.js";
import { whenReady } from "../../src/platform/redis.js";
import { dispatchDueRoutines } from "../../src/workflows/routines/dispatch.js";
import { createHarness, type Harness } from "../helpers/harness.js";
import { startTcpProxy, type TcpProxy, until } from "../reliability/support/processes.js";
import { expectLedgerConsistent, onboardCompany } from "../runs/helpers.js";
import { auth, createRoutine, routineRuns } from "./support.js";

/**
 * Dispatch attempts that fail: the job queue refuses the run's job, or the database
 * connection drops after the run was written but before the commit (as when the process
 * dies mid-dispatch). Nothing is started or charged, and the next pass starts the one run.
 */
let h: Harness;
let proxy: TcpProxy;
let proxied: AppDeps;
beforeAll(async () => {
  h = await createHarness({ ROUTINE_HOUR_MS: "50", ROUTINE_TICK_MS: "100" });
  const direct = new URL(h.config.DATABASE_URL);
  proxy = await startTcpProxy({ host: direct.hostname, port: Number(direct.port || 5432) });
  const url = new URL(h.config.DATABASE_URL);
  url.host = `127.0.0.1:${proxy.port}`;
  proxied = createDeps({ ...h.config, DATABASE_URL: url.toString() }, "dispatch-proxied");
  await whenReady(proxied.redis, 5000);
});
// Each test's routines stay its own.
afterEach(() => h.deps.db.skillRoutine.updateMany({ data: { enabled: false, nextRunAt: null } }));
afterAll(async () => {
  if (proxied) await closeDeps(proxied);
  await proxy?.close();
  await h?.close();
});

const routineOf = async (token: string, entityId: string, skillId: string) =>
  (await h.http.get(`/api/entities/${entityId}/skills/${skillId}/routine`).set(auth(token))).body;

describe("failed dispatch attempts", { timeout: 60_000 }, () => {
  it("a job queue that refuses the run leaves the occurrence due, starts and charges nothing, and is counted", async () => {
    const ctx = await onboardCompany(h, { credits: 1000 });
    const skillId = ctx.skills[0]!.id;
    const created = await createRoutine(h, ctx.token, ctx.entityId, skillId);
    // Passes at a fixed moment just after the occurrence, however long the failing ones take.
    const now = () => new Date(Date.parse(created.next_run_at!) + 10);

    // A job queue that cannot be reached (nothing listens on port 1).
    const down = new Queues({ redisUrl: "redis://127.0.0.1:1", prefix: h.config.REDIS_PREFIX });
    try {
      for (let attempt = 0; attempt < 2; attempt++) {
        expect(await dispatchDueRoutines({ ...h.deps, queues: down }, { now })).toEqual({ dispatched: 0, skipped: 0, failed: 1 });
      }
    } finally {
      await down.close();
    }
    const failing = await routineOf(ctx.token, ctx.entityId, skillId);
    expect(failing).toMatchObject({ enabled: true, next_run_at: created.next_run_at, last_outcome: "dispatch_failed", last_run_id: null });
    expect(failing.last_outcome_detail).toMatch(/failed 2 times/);
    expect(failing.occurrences).toEqual([]);
    expect(await routineRuns(h, { entityId: ctx.entityId, skillId })).toHaveLength(0);
    expect((await h.deps.db.creditLedger.findMany({ where: { workspaceId: ctx.workspaceId } })).map((e) => e.kind)).toEqual(["grant"]);
    const metrics = await h.http.get("/metrics").auth("operator", "operator-password");
    expect(metrics.text).toMatch(/routine_occurrences_total\{outcome="failed",reason="dispatch_error"\} 2/);

    // The queue is back: the next pass starts the occurrence's one run.
    expect(await dispatchDueRoutines(h.deps, { now })).toMatchObject({ dispatched: 1, failed: 0 });
    const runs = await routineRuns(h, { entityId: ctx.entityId, skillId });
    expect(runs).toHaveLength(1);
    expect(runs[0]!.routineOccurrenceAt?.toISOString()).toBe(created.next_run_at);
    expect(await routineOf(ctx.token, ctx.entityId, skillId)).toMatchObject({ last_outcome: "dispatched", last_run_id: runs[0]!.id });
    await expectLedgerConsistent(h, ctx.workspaceId);
  });

  it("a connection lost between writing the run and committing rolls everything back; the next pass starts one run", async () => {
    const ctx = await onboardCompany(h, { credits: 1000 });
    const skillId = ctx.skills[0]!.id;
    const created = await createRoutine(h, ctx.token, ctx.entityId, skillId);
    const now = () => new Date(Date.parse(created.next_run_at!) + 10);

    // The occurrence record is the transaction's last insert: the run, its reservation and its
    // job are already written when the connection goes.
    const cut = proxy.cutAfter(/INSERT INTO "public"\."routine_occurrences"/, /INSERT 0 1/);
    const pass = dispatchDueRoutines(proxied, { now }).then(
      () => "finished",
      () => "failed",
    );
    await cut;
    expect(await pass).toBe("failed");
    proxy.restore();
    await until("no transaction left open", async () => {
      const open = await h.deps.db.$queryRaw<{ n: number }[]>`
        SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND state LIKE 'idle in transaction%'`;
      return open[0]?.n === 0;
    });
    expect(await routineRuns(h, { entityId: ctx.entityId, skillId })).toHaveLength(0);
    expect((await h.deps.db.creditLedger.findMany({ where: { workspaceId: ctx.workspaceId } })).map((e) => e.kind)).toEqual(["grant"]);
    expect((await routineOf(ctx.token, ctx.entityId, skillId)).next_run_at).toBe(created.next_run_at);

    expect(await dispatchDueRoutines(h.deps, { now })).toMatchObject({ dispatched: 1 });
    const runs = await routineRuns(h, { entityId: ctx.entityId, skillId });
    expect(runs).toHaveLength(1);
    expect(runs[0]!.routineOccurrenceAt?.toISOString()).toBe(created.next_run_at);
    await expectLedgerConsistent(h, ctx.workspaceId);
  });
});
