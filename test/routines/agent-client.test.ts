import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { until } from "../collection/support.js";
import { createHarness, type Harness } from "../helpers/harness.js";
import { onboardCompany } from "../runs/helpers.js";
import { routineRuns, userIdOf } from "./support.js";

/**
 * The agent client (`@crowdlisten/harness` 2.2.3, unchanged) against this service: its
 * `ingest` destination "routine" and `recall` modes routines / skill_runs, over real HTTP.
 * The client reads its base URL once, when its module loads.
 */
type HandleV2Tool = (sb: unknown, userId: string, name: string, args: Record<string, unknown>, accessToken: string) => Promise<string>;

let h: Harness;
let server: Server;
let handleV2Tool: HandleV2Tool;
beforeAll(async () => {
  h = await createHarness({ ROUTINE_HOUR_MS: "50", ROUTINE_TICK_MS: "100" });
  server = h.app.listen(0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  process.env.CROWDLISTEN_AGENT_URL = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  ({ handleV2Tool } = (await import("@crowdlisten/harness/dist/harness-v2.js")) as unknown as { handleV2Tool: HandleV2Tool });
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await h.close();
});

describe("the agent client's routine calls", () => {
  it("configures, reads, edits and pauses a routine, and sees a stale revision refused", async () => {
    const ctx = await onboardCompany(h, { credits: 1000 });
    const userId = await userIdOf(h, ctx.token);
    const skillId = ctx.skills[0]!.id;
    const call = async (name: string, args: Record<string, unknown>) => JSON.parse(await handleV2Tool(null, userId, name, args, ctx.token));

    const before = await call("recall", { mode: "routines", entity_id: ctx.entityId });
    expect(before).toEqual({ entity_id: ctx.entityId, scheduler_enabled: true, scheduler_last_seen_at: null, routines: [] });

    const created = await call("ingest", {
      destination: "routine",
      entity_id: ctx.entityId,
      skill_id: skillId,
      routine: { enabled: true, interval_hours: 168, source_mode: "saved", max_charge_cents: 200, expected_revision: 0 },
    });
    expect(created).toMatchObject({
      skill_id: skillId,
      revision: 1,
      enabled: true,
      interval_hours: 168,
      source_mode: "saved",
      max_charge_cents: 200,
      next_run_at: expect.any(String),
      last_run_at: null,
      last_run_id: null,
      last_outcome: null,
      updated_at: expect.any(String),
      updated_by: userId,
    });

    const daily = await call("ingest", {
      destination: "routine",
      entity_id: ctx.entityId,
      skill_id: skillId,
      routine: { enabled: true, interval_hours: 24, source_mode: "refresh", max_charge_cents: 200, expected_revision: 1 },
    });
    expect(daily).toMatchObject({ revision: 2, interval_hours: 24, source_mode: "refresh" });

    // The client turns the 409 into an error carrying the status and our detail, which names the revision.
    const stale = call("ingest", {
      destination: "routine",
      entity_id: ctx.entityId,
      skill_id: skillId,
      routine: { enabled: false, interval_hours: 24, source_mode: "refresh", max_charge_cents: 200, expected_revision: 1 },
    });
    await expect(stale).rejects.toThrow(/"status":409/);
    await expect(stale).rejects.toThrow(/revision 2/);

    const paused = await call("ingest", {
      destination: "routine",
      entity_id: ctx.entityId,
      skill_id: skillId,
      routine: { enabled: false, interval_hours: 24, source_mode: "refresh", max_charge_cents: 200, expected_revision: 2 },
    });
    expect(paused).toMatchObject({ revision: 3, enabled: false, next_run_at: null });

    const listed = await call("recall", { mode: "routines", entity_id: ctx.entityId });
    expect(listed.routines).toEqual([paused]);

    // A routine without the required ceiling is refused with the 422 shape.
    await expect(
      call("ingest", {
        destination: "routine",
        entity_id: ctx.entityId,
        skill_id: ctx.skills[1]!.id,
        routine: { enabled: true, interval_hours: 24, source_mode: "saved", expected_revision: 0 },
      }),
    ).rejects.toThrow(/"status":422.*max_charge_cents/);
  });

  it("lists a routine's runs among the entity's runs (recall skill_runs)", async () => {
    const { startRoutineScheduler } = await import("../../src/workflows/routines/scheduler.js");
    const { routinesTickProcessor } = await import("../../workers/routines.js");
    const ctx = await onboardCompany(h, { credits: 1000 });
    const userId = await userIdOf(h, ctx.token);
    const skillId = ctx.skills[0]!.id;
    const workers = h.startWorkers({ "routines.tick.v1": routinesTickProcessor });
    const scheduler = startRoutineScheduler(h.deps);
    try {
      await handleV2Tool(
        null,
        userId,
        "ingest",
        {
          destination: "routine",
          entity_id: ctx.entityId,
          skill_id: skillId,
          routine: { enabled: true, interval_hours: 24, source_mode: "saved", max_charge_cents: 200, expected_revision: 0 },
        },
        ctx.token,
      );
      const [run] = await until(async () => {
        const all = await routineRuns(h, { entityId: ctx.entityId, skillId });
        return all.length > 0 && all;
      }, 15_000);

      const runs = JSON.parse(await handleV2Tool(null, userId, "recall", { mode: "skill_runs", entity_id: ctx.entityId }, ctx.token));
      expect(runs.runs).toEqual(
        expect.arrayContaining([
          expect.objectContaining({
            id: run!.id,
            skill_id: skillId,
            routine_id: expect.any(String),
            routine_occurrence_at: run!.routineOccurrenceAt!.toISOString(),
          }),
        ]),
      );
      const routines = JSON.parse(await handleV2Tool(null, userId, "recall", { mode: "routines", entity_id: ctx.entityId }, ctx.token));
      expect(routines.scheduler_last_seen_at).toEqual(expect.any(String));
      expect(routines.routines[0]).toMatchObject({ last_run_id: expect.any(String), last_outcome: "dispatched" });
    } finally {
      await scheduler.close();
      await workers.close();
    }
  });
});
