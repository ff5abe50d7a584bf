import type { ChildProcess } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TICK_SCHEDULER_ID } from "../../src/workflows/routines/scheduler.js";
import { createHarness, type Harness } from "../helpers/harness.js";
import { exited, type RedisServer, startRedisServer, startWorkerProcess as startWorker, until } from "../reliability/support/processes.js";
import { onboardCompany } from "../runs/helpers.js";
import { createRoutine, reach } from "./support.js";

/**
 * Exactly one run per occurrence with the real worker entry (`workers/index.ts`, as the
 * Procfile starts it) running twice, one of the two killed (SIGKILL) and started again
 * mid-way, and Redis killed and started again empty (everything BullMQ held is lost, the
 * routines job scheduler included). The compressed "hour" is 100 ms: a daily routine comes
 * due every 2.4 s.
 */
const HOUR_MS = 100;
const DAY = 24 * HOUR_MS;

let redis: RedisServer;
let h: Harness;
const children: ChildProcess[] = [];
const texts = new Map<ChildProcess, () => string>();
const text = (child: ChildProcess) => texts.get(child)?.() ?? "";
beforeAll(async () => {
  redis = await startRedisServer({ persistence: "none" });
  h = await createHarness({ REDIS_URL: redis.url, ROUTINE_HOUR_MS: String(HOUR_MS), ROUTINE_TICK_MS: "100" });
});
afterAll(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  await h?.close();
  await redis?.stop();
});

function startWorkerProcess(): ChildProcess {
  const started = startWorker(h.config);
  texts.set(started.child, started.text);
  children.push(started.child);
  return started.child;
}

const started = (child: ChildProcess) =>
  until(`worker ${child.pid} started`, async () => text(child).includes("worker started"), 30_000).catch((err: Error) => {
    throw new Error(`${err.message}; it wrote: ${text(child).slice(0, 2000)}`);
  });

describe("routines with two worker processes", { timeout: 120_000 }, () => {
  it("start exactly one run per occurrence through a worker kill and a Redis restart", async () => {
    const ctx = await onboardCompany(h, { credits: 100_000, objectives: 5 });
    const a = startWorkerProcess();
    const b = startWorkerProcess();
    await Promise.all([started(a), started(b)]);
    // The worker entry upserts the routines job scheduler at start-up.
    await until("the job scheduler", () => h.deps.queues.get("routines").getJobScheduler(TICK_SCHEDULER_ID), 10_000);
    for (const skill of ctx.skills) await createRoutine(h, ctx.token, ctx.entityId, skill.id, { max_charge_cents: 500 });
    const routines = await h.deps.db.skillRoutine.findMany({ where: { entityId: ctx.entityId } });
    const runsPerRoutine = async () => {
      const rows = await h.deps.db.workflowRun.groupBy({ by: ["routineId"], where: { entityId: ctx.entityId }, _count: true });
      return Math.min(...routines.map((r) => rows.find((row) => row.routineId === r.id)?._count ?? 0));
    };

    await until("two occurrences of every routine", async () => (await runsPerRoutine()) >= 2, 30_000);
    // One worker process dies wherever it is (a dispatch pass may be mid-transaction) and comes back.
    a.kill("SIGKILL");
    await exited(a);
    const a2 = startWorkerProcess();
    await started(a2);
    await until("three occurrences of every routine", async () => (await runsPerRoutine()) >= 3, 30_000);

    // Redis dies and comes back empty: the job scheduler, its ticks and queued jobs are gone.
    await redis.kill();
    await reach(Date.now() + DAY / 2);
    await redis.start();
    const afterRestart = await runsPerRoutine();
    await until(
      "two more occurrences of every routine after Redis came back",
      async () => (await runsPerRoutine()) >= afterRestart + 2,
      40_000,
    );

    // The watchdog noticed the missing ticks and restored the job scheduler Redis lost.
    // (Read once this process's own connection is back: it queues no command while offline.)
    const restored = await until(
      "this process's queue connection back",
      () =>
        h.deps.queues
          .get("routines")
          .getJobScheduler(TICK_SCHEDULER_ID)
          .catch(() => undefined),
      10_000,
    );
    expect(restored).toMatchObject({ every: 100 });
    expect([b, a2].some((child) => text(child).includes("no routine dispatch pass lately"))).toBe(true);

    for (const child of [b, a2]) child.kill("SIGTERM");
    await Promise.all([exited(b), exited(a2)]);

    const runs = await h.deps.db.workflowRun.findMany({ where: { entityId: ctx.entityId }, orderBy: { routineOccurrenceAt: "asc" } });
    const occurrences = await h.deps.db.routineOccurrence.findMany({
      where: { routine: { entityId: ctx.entityId } },
      orderBy: { occurrenceAt: "asc" },
    });
    // Every occurrence started one run, and every run belongs to one occurrence.
    expect(occurrences.every((o) => o.outcome === "dispatched" && o.runId)).toBe(true);
    expect(occurrences).toHaveLength(runs.length);
    expect(new Set(occurrences.map((o) => o.runId))).toEqual(new Set(runs.map((r) => r.id)));
    for (const routine of routines) {
      const own = occurrences.filter((o) => o.routineId === routine.id);
      const ownRuns = runs.filter((r) => r.routineId === routine.id);
      expect(new Set(ownRuns.map((r) => r.routineOccurrenceAt!.getTime())).size).toBe(ownRuns.length);
      // The first occurrence is the one planned at enabling; each next one follows by one
      // interval, or by more when it stood for occurrences nothing could dispatch.
      expect(own[0]!.occurrenceAt.getTime()).toBe(routine.nextRunAt!.getTime());
      for (let k = 1; k < own.length; k++) {
        expect(own[k]!.occurrenceAt.getTime() - own[k - 1]!.occurrenceAt.getTime()).toBe((1 + own[k]!.coalesced) * DAY);
      }
    }
    // Both processes dispatched, each only as itself.
    const dispatchers = [a, b, a2].map((child) =>
      text(child)
        .split("\n")
        .filter((line) => line.includes("routine run dispatched"))
        .map((line) => (JSON.parse(line) as { dispatcher: string }).dispatcher),
    );
    expect(dispatchers.filter((d) => d.length > 0).length).toBeGreaterThanOrEqual(2);
    [a, b, a2].forEach((child, i) => {
      expect(new Set(dispatchers[i])).toEqual(
        dispatchers[i]!.length > 0 ? new Set([expect.stringMatching(new RegExp(`:${child.pid}$`))]) : new Set(),
      );
    });
  });
});
