import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { dispatchDueRoutines } from "../../src/workflows/routines/dispatch.js";
import { type RoutineScheduler, startRoutineScheduler, TICK_SCHEDULER_ID } from "../../src/workflows/routines/scheduler.js";
import { processors } from "../../workers/processors.js";
import { routinesTickProcessor } from "../../workers/routines.js";
import type { WorkerHandles } from "../../workers/runtime.js";
import { until } from "../collection/support.js";
import { createHarness, type Harness } from "../helpers/harness.js";
import { expectAllLedgersConsistent, expectLedgerConsistent, onboardCompany } from "../runs/helpers.js";
import { auth, createRoutine, putRoutine, reach, routineRuns, userIdOf } from "./support.js";

/**
 * Dispatch on a compressed clock: an "hour" is 100 ms, so a daily routine comes due every 2.4 s,
 * and the routines job scheduler ticks every 100 ms.
 */
const HOUR_MS = 100;
const DAY = 24 * HOUR_MS;
let h: Harness;
beforeAll(async () => {
  h = await createHarness({ ROUTINE_HOUR_MS: String(HOUR_MS), ROUTINE_TICK_MS: "100" });
});
afterEach(async () => {
  await stopScheduler();
  // Each test's routines stay its own: none comes due during the next test.
  await h.deps.db.skillRoutine.updateMany({ data: { enabled: false, nextRunAt: null } });
  await expectAllLedgersConsistent(h);
});
afterAll(() => h.close());

let running: { scheduler: RoutineScheduler; workers: WorkerHandles } | undefined;
/** The worker side of routines, as workers/index.ts starts it: the tick processor and the scheduler. */
function startScheduler(withRunProcessors = false) {
  const workers = h.startWorkers(withRunProcessors ? processors : { "routines.tick.v1": routinesTickProcessor }, 2);
  running = { scheduler: startRoutineScheduler(h.deps), workers };
}
async function stopScheduler() {
  if (!running) return;
  await running.scheduler.close();
  await running.workers.close();
  running = undefined;
}

async function ingestSaved(ctx: { token: string; entityId: string }) {
  const res = await h.http
    .post("/agent/v1/ingest/content")
    .set(auth(ctx.token))
    .send({
      entity_id: ctx.entityId,
      sources: [
        { platform: "hackernews", id: "r1", content: "Acme feature 1 is fast and developers love the new dashboard." },
        { platform: "hackernews", id: "r2", content: "Developers say Acme feature 1 breaks on large projects, which is frustrating." },
      ],
    });
  expect(res.status).toBe(200);
}

const routineOf = async (token: string, entityId: string, skillId: string) =>
  (await h.http.get(`/api/entities/${entityId}/skills/${skillId}/routine`).set(auth(token))).body;

describe("routine dispatch", { timeout: 60_000 }, () => {
  it("starts an ordinary workflow run on time, marked with the routine and its occurrence, and keeps the cadence", async () => {
    const ctx = await onboardCompany(h, { credits: 1000 });
    await ingestSaved(ctx);
    const skillId = ctx.skills[0]!.id;
    startScheduler(true);
    const created = await createRoutine(h, ctx.token, ctx.entityId, skillId, { source_mode: "saved", max_charge_cents: 500 });
    const first = Date.parse(created.next_run_at!);

    const [run] = await until(async () => {
      const runs = await routineRuns(h, { entityId: ctx.entityId, skillId });
      return runs.length >= 1 && runs;
    }, 15_000);
    expect(run!.routineOccurrenceAt?.getTime()).toBe(first);
    // Not before its occurrence, and well before the next one.
    expect(run!.createdAt.getTime()).toBeGreaterThanOrEqual(first);
    expect(run!.createdAt.getTime()).toBeLessThan(first + DAY);
    expect(run!.userId).toBe(await userIdOf(h, ctx.token));
    expect(run!.sourceMode).toBe("saved");

    // It runs like any other run and is listed with them.
    const done = await until(async () => {
      const res = await h.http.get(`/api/entities/${ctx.entityId}/skill-runs`).set(auth(ctx.token));
      const listed = res.body.runs.find((r: { id: string }) => r.id === run!.id);
      return listed && ["completed", "failed", "blocked"].includes(listed.status) ? listed : undefined;
    }, 30_000);
    expect(done).toMatchObject({
      status: "completed",
      routine_id: expect.any(String),
      routine_occurrence_at: new Date(first).toISOString(),
      skill_id: skillId,
    });
    expect(done.charged_credits).toBeLessThanOrEqual(500);
    expect(done.max_charge_credits).toBeLessThanOrEqual(500);

    // The next occurrence is one interval after the first, and so on.
    const runs = await until(async () => {
      const all = await routineRuns(h, { entityId: ctx.entityId, skillId });
      return all.length >= 2 && all;
    }, 15_000);
    expect(runs[1]!.routineOccurrenceAt?.getTime()).toBe(first + DAY);
    const routine = await routineOf(ctx.token, ctx.entityId, skillId);
    expect(routine.occurrences.length).toBeGreaterThanOrEqual(2);
    expect(routine.occurrences.at(-1)).toMatchObject({ outcome: "dispatched", run_id: run!.id, coalesced: 0 });

    // Pausing stops later occurrences and leaves the started run alone.
    const paused = await putRoutine(h, ctx.token, ctx.entityId, skillId, {
      enabled: false,
      interval_hours: 24,
      source_mode: "saved",
      max_charge_cents: 500,
      expected_revision: routine.revision,
    });
    expect(paused.status).toBe(200);
    const count = (await routineRuns(h, { entityId: ctx.entityId, skillId })).length;
    const lastStarted = (await routineRuns(h, { entityId: ctx.entityId, skillId })).at(-1)!;
    await until(async () => {
      const row = await h.deps.db.workflowRun.findUniqueOrThrow({ where: { id: lastStarted.id } });
      return ["completed", "failed", "blocked"].includes(row.status) && row;
    }, 30_000);
    expect((await h.deps.db.workflowRun.findUniqueOrThrow({ where: { id: lastStarted.id } })).status).toBe("completed");
    await reach(Date.parse(paused.body.updated_at) + 2 * DAY);
    expect(await routineRuns(h, { entityId: ctx.entityId, skillId })).toHaveLength(count);
    await expectLedgerConsistent(h, ctx.workspaceId);
  });

  it("coalesces the occurrences missed while the workers were stopped into one run", async () => {
    const ctx = await onboardCompany(h, { credits: 1000 });
    const skillId = ctx.skills[0]!.id;
    startScheduler();
    const created = await createRoutine(h, ctx.token, ctx.entityId, skillId, { max_charge_cents: 500 });
    const first = Date.parse(created.next_run_at!);
    await until(async () => (await routineRuns(h, { entityId: ctx.entityId, skillId })).length === 1, 15_000);
    await stopScheduler();

    // Four more occurrences pass with nothing running.
    await reach(first + 4 * DAY + DAY / 2);
    expect(await routineRuns(h, { entityId: ctx.entityId, skillId })).toHaveLength(1);
    startScheduler();
    const runs = await until(async () => {
      const all = await routineRuns(h, { entityId: ctx.entityId, skillId });
      return all.length >= 2 && all;
    }, 15_000);
    expect(runs).toHaveLength(2);
    // The latest due occurrence runs, standing for the three before it.
    expect(runs[1]!.routineOccurrenceAt?.getTime()).toBe(first + 4 * DAY);
    const routine = await routineOf(ctx.token, ctx.entityId, skillId);
    expect(routine.occurrences[0]).toMatchObject({ outcome: "dispatched", coalesced: 3, run_id: runs[1]!.id });
    expect(Date.parse(routine.next_run_at)).toBe(first + 5 * DAY);
    expect(routine.last_outcome_detail).toMatch(/4 occurrences/);

    // And the cadence resumes: the next one comes one interval later, alone.
    const after = await until(async () => {
      const all = await routineRuns(h, { entityId: ctx.entityId, skillId });
      return all.length >= 3 && all;
    }, 15_000);
    expect(after[2]!.routineOccurrenceAt?.getTime()).toBe(first + 5 * DAY);
  });

  it("refuses a run priced above the ceiling, or that the workspace cannot reserve, and charges nothing", async () => {
    // A saved run of the default skill is priced at 10 credits (at most 13 charged).
    const pricey = await onboardCompany(h, { credits: 1000 });
    const poor = await onboardCompany(h, { credits: 5 });
    startScheduler();
    const above = await createRoutine(h, pricey.token, pricey.entityId, pricey.skills[0]!.id, { max_charge_cents: 9 });
    const broke = await createRoutine(h, poor.token, poor.entityId, poor.skills[0]!.id, { max_charge_cents: 500 });

    const skipped = async (ctx: typeof pricey, skillId: string) =>
      until(async () => {
        const routine = await routineOf(ctx.token, ctx.entityId, skillId);
        return routine.occurrences.length > 0 && routine;
      }, 15_000);
    const a = await skipped(pricey, pricey.skills[0]!.id);
    expect(a).toMatchObject({ enabled: true, last_outcome: "price_above_ceiling", last_run_id: null, last_run_at: null });
    expect(a.occurrences[0]).toMatchObject({
      occurrence_at: above.next_run_at,
      outcome: "skipped",
      reason: "price_above_ceiling",
      run_id: null,
      estimated_credits: 10,
    });
    expect(a.last_outcome_detail).toMatch(/10 credits.*9 cents/);
    expect(Date.parse(a.next_run_at)).toBe(Date.parse(above.next_run_at!) + DAY);

    const b = await skipped(poor, poor.skills[0]!.id);
    expect(b).toMatchObject({ enabled: true, last_outcome: "insufficient_credits", last_run_id: null });
    expect(b.occurrences[0]).toMatchObject({ occurrence_at: broke.next_run_at, reason: "insufficient_credits" });

    // Nothing was reserved or charged: the ledgers hold only their grants.
    for (const ctx of [pricey, poor]) {
      expect(await routineRuns(h, { entityId: ctx.entityId })).toHaveLength(0);
      const kinds = (await h.deps.db.creditLedger.findMany({ where: { workspaceId: ctx.workspaceId } })).map((e) => e.kind);
      expect(kinds).toEqual(["grant"]);
    }

    // Raising the ceiling lets the next occurrence run, within the new ceiling.
    const raised = await putRoutine(h, pricey.token, pricey.entityId, pricey.skills[0]!.id, {
      enabled: true,
      interval_hours: 24,
      source_mode: "saved",
      max_charge_cents: 11,
      expected_revision: a.revision,
    });
    expect(raised.status).toBe(200);
    const [run] = await until(async () => {
      const runs = await routineRuns(h, { entityId: pricey.entityId });
      return runs.length > 0 && runs;
    }, 15_000);
    expect(run!.maxChargeCredits).toBe(11);
    expect(run!.estimatedCredits).toBe(10);

    const metrics = await h.http.get("/metrics").auth("operator", "operator-password");
    expect(metrics.text).toMatch(/routine_occurrences_total\{outcome="skipped",reason="price_above_ceiling"\} [1-9]/);
    expect(metrics.text).toMatch(/routine_occurrences_total\{outcome="skipped",reason="insufficient_credits"\} [1-9]/);
    expect(metrics.text).toMatch(/routine_occurrences_total\{outcome="dispatched",reason=""\} [1-9]/);
    expect(metrics.text).toMatch(/routine_occurrences_total\{outcome="failed",reason="dispatch_error"\} 0/);
    expect(metrics.text).toMatch(/routine_scheduler_last_seen_timestamp_seconds \d{10}/);
  });

  it("stops a routine whose skill was removed, recording why, without a run", async () => {
    const ctx = await onboardCompany(h, { credits: 1000, objectives: 2 });
    const [gone, kept] = ctx.skills as [{ id: string; revision: number }, { id: string; revision: number }];
    const created = await createRoutine(h, ctx.token, ctx.entityId, gone.id);
    const current = await h.http.get(`/api/entities/${ctx.entityId}/skills`).set(auth(ctx.token));
    const keptSkill = current.body.skills.find((s: { id: string }) => s.id === kept.id);
    const replaced = await h.http
      .put(`/api/entities/${ctx.entityId}/skills`)
      .set(auth(ctx.token))
      .send({
        skills: [{ skill_id: kept.id, id: keptSkill.objective_id, title: keptSkill.name, question: keptSkill.question }],
        expected_skills: current.body.skills.map((s: { id: string; revision: number }) => ({ id: s.id, revision: s.revision })),
      });
    expect(replaced.status, JSON.stringify(replaced.body)).toBe(200);
    startScheduler();

    const stopped = await until(async () => {
      const routine = await routineOf(ctx.token, ctx.entityId, gone.id);
      return routine.last_outcome && routine;
    }, 15_000);
    expect(stopped).toMatchObject({ enabled: false, next_run_at: null, last_outcome: "skill_removed", revision: 2 });
    expect(stopped.occurrences).toEqual([
      expect.objectContaining({ occurrence_at: created.next_run_at, outcome: "skipped", reason: "skill_removed", run_id: null }),
    ]);
    const listed = await h.http.get(`/api/entities/${ctx.entityId}/skill-routines`).set(auth(ctx.token));
    expect(listed.body.routines).toEqual([expect.objectContaining({ skill_id: gone.id, last_outcome: "skill_removed" })]);
    expect(await routineRuns(h, { entityId: ctx.entityId })).toHaveLength(0);
    expect((await h.deps.db.creditLedger.findMany({ where: { workspaceId: ctx.workspaceId } })).map((e) => e.kind)).toEqual(["grant"]);
  });

  it("stops a routine whose configurer lost access to the entity", async () => {
    const ctx = await onboardCompany(h, { credits: 1000 });
    const skillId = ctx.skills[0]!.id;
    const member = await h.token();
    await h.http.get("/agent/v1/connection").set(auth(member));
    const memberId = await userIdOf(h, member);
    await h.deps.db.workspaceMember.create({ data: { workspaceId: ctx.workspaceId, userId: memberId, role: "admin" } });
    const created = await createRoutine(h, member, ctx.entityId, skillId);
    expect(created.updated_by).toBe(memberId);
    await h.deps.db.workspaceMember.delete({ where: { workspaceId_userId: { workspaceId: ctx.workspaceId, userId: memberId } } });
    startScheduler();

    const stopped = await until(async () => {
      const routine = await routineOf(ctx.token, ctx.entityId, skillId);
      return routine.last_outcome && routine;
    }, 15_000);
    expect(stopped).toMatchObject({ enabled: false, next_run_at: null, last_outcome: "access_revoked" });
    expect(stopped.occurrences[0]).toMatchObject({ outcome: "skipped", reason: "access_revoked", run_id: null });
    expect(await routineRuns(h, { entityId: ctx.entityId })).toHaveLength(0);
  });

  it("shows the job scheduler on the routines queue and keeps dispatching when BullMQ loses it", async () => {
    const ctx = await onboardCompany(h, { credits: 1000 });
    const skillId = ctx.skills[0]!.id;
    startScheduler();
    const queue = h.deps.queues.get("routines");
    const scheduler = await until(() => queue.getJobScheduler(TICK_SCHEDULER_ID));
    expect(scheduler).toMatchObject({ every: 100, name: "routines.tick.v1" });
    const board = await h.http.get("/admin/queues/api/queues").auth("operator", "operator-password");
    expect(board.body.queues.map((q: { name: string }) => q.name)).toContain("routines");

    // The job scheduler disappears (a Redis that lost its data, or one of BullMQ's known
    // scheduler bugs): the watchdog notices the stale heartbeat, dispatches and restores it.
    await queue.removeJobScheduler(TICK_SCHEDULER_ID);
    await queue.drain(true);
    const created = await createRoutine(h, ctx.token, ctx.entityId, skillId);
    const [run] = await until(async () => {
      const runs = await routineRuns(h, { entityId: ctx.entityId, skillId });
      return runs.length > 0 && runs;
    }, 15_000);
    expect(run!.routineOccurrenceAt?.toISOString()).toBe(created.next_run_at);
    expect(await until(() => queue.getJobScheduler(TICK_SCHEDULER_ID))).toMatchObject({ every: 100 });

    const listed = await h.http.get(`/api/entities/${ctx.entityId}/skill-routines`).set(auth(ctx.token));
    expect(listed.body.scheduler_enabled).toBe(true);
    expect(Date.now() - Date.parse(listed.body.scheduler_last_seen_at)).toBeLessThan(5_000);
  });

  it("starts exactly one run per occurrence when many passes race", async () => {
    const ctx = await onboardCompany(h, { credits: 10_000, objectives: 5 });
    for (const skill of ctx.skills) await createRoutine(h, ctx.token, ctx.entityId, skill.id);
    const firsts = (await h.deps.db.skillRoutine.findMany({ where: { entityId: ctx.entityId } })).map((r) => r.nextRunAt!.getTime());
    const end = Math.max(...firsts) + 2 * DAY + DAY / 2;
    // Sixteen passes at a time, back to back, until three occurrences of each have passed.
    while (Date.now() < end) {
      await Promise.all(Array.from({ length: 16 }, () => dispatchDueRoutines(h.deps)));
    }
    await Promise.all(Array.from({ length: 16 }, () => dispatchDueRoutines(h.deps)));
    // Each occurrence ran once, in order, none skipped or doubled.
    const runs = await routineRuns(h, { entityId: ctx.entityId });
    for (const skill of ctx.skills) {
      const own = runs.filter((r) => r.skillKey === skill.id).map((r) => r.routineOccurrenceAt!.getTime());
      expect(own.length).toBeGreaterThanOrEqual(3);
      expect(own).toEqual(own.map((_, k) => own[0]! + k * DAY));
    }
    const occurrences = await h.deps.db.routineOccurrence.findMany({ where: { routine: { entityId: ctx.entityId } } });
    expect(occurrences).toHaveLength(runs.length);
    expect(occurrences.every((o) => o.outcome === "dispatched" && o.coalesced === 0)).toBe(true);
    expect(new Set(occurrences.map((o) => o.runId))).toEqual(new Set(runs.map((r) => r.id)));
  });
});
