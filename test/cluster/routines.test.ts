import type { ChildProcess } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TICK_SCHEDULER_ID } from "../../src/workflows/routines/scheduler.js";
import { createHarness, type Harness } from "../helpers/harness.js";
import { exited, startWorkerProcess, until } from "../reliability/support/processes.js";
import { createRoutine } from "../routines/support.js";
import { onboardCompany } from "../runs/helpers.js";

/**
 * Routines on a Redis Cluster with two worker processes (the Procfile's worker entry, as real
 * child processes): the routines job scheduler lives on the cluster, both processes dispatch,
 * and every occurrence starts exactly one run. The compressed "hour" is 100 ms: a daily
 * routine comes due every 2.4 s.
 */
const HOUR_MS = 100;
const DAY = 24 * HOUR_MS;

let h: Harness;
const children: ChildProcess[] = [];

beforeAll(async () => {
  h = await createHarness({ ROUTINE_HOUR_MS: String(HOUR_MS), ROUTINE_TICK_MS: "100" });
});
afterAll(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  await h?.close();
});

describe("routines on a Redis Cluster with two worker processes", { timeout: 90_000 }, () => {
  it("dispatch from both processes and start exactly one run per occurrence", async () => {
    const ctx = await onboardCompany(h, { credits: 100_000, objectives: 3 });
    const workers = [startWorkerProcess(h.config), startWorkerProcess(h.config)];
    children.push(...workers.map((w) => w.child));
    for (const { child, text } of workers) {
      await until(`worker ${child.pid} started`, async () => text().includes("worker started"), 30_000);
    }
    await until("the job scheduler on the cluster", () => h.deps.queues.get("routines").getJobScheduler(TICK_SCHEDULER_ID), 10_000);
    for (const skill of ctx.skills) await createRoutine(h, ctx.token, ctx.entityId, skill.id, { max_charge_cents: 500 });
    const routines = await h.deps.db.skillRoutine.findMany({ where: { entityId: ctx.entityId } });
    const runsPerRoutine = async () => {
      const rows = await h.deps.db.workflowRun.groupBy({ by: ["routineId"], where: { entityId: ctx.entityId }, _count: true });
      return Math.min(...routines.map((r) => rows.find((row) => row.routineId === r.id)?._count ?? 0));
    };
    await until("three occurrences of every routine", async () => (await runsPerRoutine()) >= 3, 45_000);
    for (const { child } of workers) child.kill("SIGTERM");
    await Promise.all(workers.map(({ child }) => exited(child)));

    const runs = await h.deps.db.workflowRun.findMany({ where: { entityId: ctx.entityId } });
    const occurrences = await h.deps.db.routineOccurrence.findMany({
      where: { routine: { entityId: ctx.entityId } },
      orderBy: { occurrenceAt: "asc" },
    });
    expect(occurrences.every((o) => o.outcome === "dispatched" && o.runId)).toBe(true);
    expect(occurrences).toHaveLength(runs.length);
    expect(new Set(occurrences.map((o) => o.runId))).toEqual(new Set(runs.map((r) => r.id)));
    for (const routine of routines) {
      const own = occurrences.filter((o) => o.routineId === routine.id);
      for (let k = 1; k < own.length; k++) {
        expect(own[k]!.occurrenceAt.getTime() - own[k - 1]!.occurrenceAt.getTime()).toBe((1 + own[k]!.coalesced) * DAY);
      }
    }
    // Both processes took part in dispatching.
    const dispatching = workers.filter(({ text }) => text().includes("routine run dispatched"));
    expect(dispatching.length).toBe(2);
  });
});
