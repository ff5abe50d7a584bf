import supertest from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../../src/app.js";
import { createHarness, type Harness } from "../helpers/harness.js";
import { onboardCompany } from "../runs/helpers.js";
import { auth, createRoutine, putRoutine, userIdOf } from "./support.js";

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(() => h.close());

const HOUR = 3_600_000;
const FIELDS = [
  "skill_id",
  "revision",
  "enabled",
  "interval_hours",
  "source_mode",
  "max_charge_cents",
  "next_run_at",
  "last_run_at",
  "last_run_id",
  "last_outcome",
  "updated_at",
  "updated_by",
];

describe("PUT /api/entities/{entity_id}/skills/{skill_id}/routine", () => {
  it("creates with expected_revision 0: the first occurrence is one interval after enabling", async () => {
    const ctx = await onboardCompany(h);
    const skillId = ctx.skills[0]!.id;
    const before = Date.now();
    const res = await putRoutine(h, ctx.token, ctx.entityId, skillId, {
      enabled: true,
      interval_hours: 24,
      source_mode: "saved",
      max_charge_cents: 200,
      expected_revision: 0,
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    for (const field of FIELDS) expect(res.body).toHaveProperty(field);
    expect(res.body).toMatchObject({
      skill_id: skillId,
      entity_id: ctx.entityId,
      revision: 1,
      enabled: true,
      interval_hours: 24,
      source_mode: "saved",
      max_charge_cents: 200,
      last_run_at: null,
      last_run_id: null,
      last_outcome: null,
      updated_by: await userIdOf(h, ctx.token),
    });
    const next = Date.parse(res.body.next_run_at);
    expect(next).toBeGreaterThanOrEqual(before + 24 * HOUR);
    expect(next).toBeLessThanOrEqual(Date.now() + 24 * HOUR);
  });

  it("changes and pauses against the last-read revision; a stale revision is 409 with the current one", async () => {
    const ctx = await onboardCompany(h);
    const skillId = ctx.skills[0]!.id;
    const created = await createRoutine(h, ctx.token, ctx.entityId, skillId, { interval_hours: 24, max_charge_cents: 300 });

    // A second create (expected_revision 0) meets the existing routine.
    const again = await putRoutine(h, ctx.token, ctx.entityId, skillId, {
      enabled: true,
      interval_hours: 168,
      source_mode: "saved",
      max_charge_cents: 300,
      expected_revision: 0,
    });
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ code: "conflict", current_revision: 1, routine: { revision: 1, interval_hours: 24 } });
    expect(again.body.detail).toContain("revision 1");

    // Weekly instead of daily: counted from enabling, one new interval.
    const weekly = await putRoutine(h, ctx.token, ctx.entityId, skillId, {
      enabled: true,
      interval_hours: 168,
      source_mode: "refresh",
      max_charge_cents: 300,
      expected_revision: 1,
    });
    expect(weekly.status).toBe(200);
    expect(weekly.body).toMatchObject({ revision: 2, interval_hours: 168, source_mode: "refresh", enabled: true });
    expect(Date.parse(weekly.body.next_run_at)).toBe(Date.parse(created.next_run_at!) - 24 * HOUR + 168 * HOUR);

    // Based on revision 1 again, with other settings: stale.
    const stale = await putRoutine(h, ctx.token, ctx.entityId, skillId, {
      enabled: true,
      interval_hours: 24,
      source_mode: "saved",
      max_charge_cents: 50,
      expected_revision: 1,
    });
    expect(stale.status).toBe(409);
    expect(stale.body).toMatchObject({ code: "conflict", current_revision: 2 });

    // Pausing clears the next occurrence.
    const paused = await putRoutine(h, ctx.token, ctx.entityId, skillId, {
      enabled: false,
      interval_hours: 168,
      source_mode: "refresh",
      max_charge_cents: 300,
      expected_revision: 2,
    });
    expect(paused.status).toBe(200);
    expect(paused.body).toMatchObject({ revision: 3, enabled: false, next_run_at: null });

    // Enabling again counts one interval from now.
    const before = Date.now();
    const resumed = await putRoutine(h, ctx.token, ctx.entityId, skillId, {
      enabled: true,
      interval_hours: 168,
      source_mode: "refresh",
      max_charge_cents: 300,
      expected_revision: 3,
    });
    expect(resumed.status).toBe(200);
    expect(resumed.body.revision).toBe(4);
    expect(Date.parse(resumed.body.next_run_at)).toBeGreaterThanOrEqual(before + 168 * HOUR);

    // The same settings at the current revision change nothing.
    const same = await putRoutine(h, ctx.token, ctx.entityId, skillId, {
      enabled: true,
      interval_hours: 168,
      source_mode: "refresh",
      max_charge_cents: 300,
      expected_revision: 4,
    });
    expect(same.status).toBe(200);
    expect(same.body).toEqual(resumed.body);

    // A ceiling change keeps the planned occurrence.
    const ceiling = await putRoutine(h, ctx.token, ctx.entityId, skillId, {
      enabled: true,
      interval_hours: 168,
      source_mode: "refresh",
      max_charge_cents: 1000,
      expected_revision: 4,
    });
    expect(ceiling.body).toMatchObject({ revision: 5, max_charge_cents: 1000, next_run_at: resumed.body.next_run_at });
  });

  it("answers a repeated write whose answer was lost with the routine it made", async () => {
    const ctx = await onboardCompany(h);
    const skillId = ctx.skills[0]!.id;
    const body = { enabled: true, interval_hours: 24, source_mode: "saved", max_charge_cents: 120, expected_revision: 0 };
    const first = await putRoutine(h, ctx.token, ctx.entityId, skillId, body);
    expect(first.status).toBe(201);
    const retry = await putRoutine(h, ctx.token, ctx.entityId, skillId, body);
    expect(retry.status).toBe(200);
    expect(retry.body).toEqual(first.body);

    // Another member sending the same thing based on revision 0 did not make revision 1: a conflict.
    const other = await h.token();
    await h.http.get("/agent/v1/connection").set(auth(other));
    await h.deps.db.workspaceMember.create({ data: { workspaceId: ctx.workspaceId, userId: await userIdOf(h, other), role: "admin" } });
    const conflict = await putRoutine(h, other, ctx.entityId, skillId, body);
    expect(conflict.status).toBe(409);
  });

  it("makes one routine when two first writes race", async () => {
    const ctx = await onboardCompany(h);
    const skillId = ctx.skills[0]!.id;
    const results = await Promise.all(
      [24, 168].map((interval) =>
        putRoutine(h, ctx.token, ctx.entityId, skillId, {
          enabled: true,
          interval_hours: interval,
          source_mode: "saved",
          max_charge_cents: 100,
          expected_revision: 0,
        }),
      ),
    );
    expect(results.map((r) => r.status).sort()).toEqual([201, 409]);
    expect(await h.deps.db.skillRoutine.count({ where: { entityId: ctx.entityId, skillKey: skillId } })).toBe(1);
  });

  it("validates every field with the 422 shape", async () => {
    const ctx = await onboardCompany(h);
    const skillId = ctx.skills[0]!.id;
    const valid = { enabled: true, interval_hours: 24, source_mode: "saved", max_charge_cents: 100, expected_revision: 0 };
    const cases: [Record<string, unknown>, string, string][] = [
      [{ interval_hours: 12 }, "interval_hours", "enum"],
      [{ interval_hours: "24" }, "interval_hours", "enum"],
      [{ source_mode: "live" }, "source_mode", "enum"],
      [{ max_charge_cents: 0 }, "max_charge_cents", "greater_than_equal"],
      [{ max_charge_cents: 10_001 }, "max_charge_cents", "less_than_equal"],
      [{ max_charge_cents: 1.5 }, "max_charge_cents", "int_type"],
      [{ max_charge_cents: undefined }, "max_charge_cents", "missing"],
      [{ max_charge_cents: null }, "max_charge_cents", "int_type"],
      [{ enabled: "yes" }, "enabled", "bool_type"],
      [{ expected_revision: -1 }, "expected_revision", "greater_than_equal"],
      [{ expected_revision: undefined }, "expected_revision", "missing"],
    ];
    for (const [change, field, type] of cases) {
      const res = await putRoutine(h, ctx.token, ctx.entityId, skillId, { ...valid, ...change });
      expect(res.status, `${JSON.stringify(change)} → ${JSON.stringify(res.body)}`).toBe(422);
      expect(res.body.detail[0], JSON.stringify(change)).toMatchObject({ loc: ["body", field], type });
    }
    // The bounds themselves are accepted; unknown fields are ignored.
    const low = await putRoutine(h, ctx.token, ctx.entityId, skillId, { ...valid, max_charge_cents: 1, note: "x" });
    expect(low.status).toBe(201);
    const high = await putRoutine(h, ctx.token, ctx.entityId, skillId, { ...valid, max_charge_cents: 10_000, expected_revision: 1 });
    expect(high.status).toBe(200);
    expect(await h.deps.db.skillRoutine.count({ where: { entityId: ctx.entityId, skillKey: skillId } })).toBe(1);
  });

  it("lets admins configure, editors and viewers only read, hides the routine from others, and needs a full credential", async () => {
    const ctx = await onboardCompany(h);
    const skillId = ctx.skills[0]!.id;
    const body = { enabled: true, interval_hours: 24, source_mode: "saved", max_charge_cents: 100, expected_revision: 0 };

    const outsider = await h.token();
    expect((await putRoutine(h, outsider, ctx.entityId, skillId, body)).status).toBe(404);
    expect((await h.http.get(`/api/entities/${ctx.entityId}/skill-routines`).set(auth(outsider))).status).toBe(404);
    expect((await h.http.get(`/api/entities/${ctx.entityId}/skills/${skillId}/routine`).set(auth(outsider))).status).toBe(404);

    // A skill of another entity (ids are the entity's own: "obj-1" there is not "only-there" here),
    // and a skill that does not exist.
    const elsewhere = await onboardCompany(h);
    const there = await h.http
      .put(`/api/entities/${elsewhere.entityId}/skills`)
      .set(auth(elsewhere.token))
      .send({ expected_skills: elsewhere.skills, skills: [{ id: "only-there", title: "Elsewhere" }] });
    expect(there.status).toBe(200);
    expect((await putRoutine(h, ctx.token, ctx.entityId, "only-there", body)).status).toBe(404);
    expect((await putRoutine(h, elsewhere.token, elsewhere.entityId, "only-there", body)).status).toBe(201);
    expect((await putRoutine(h, ctx.token, ctx.entityId, "00000000-0000-4000-8000-000000000000", body)).status).toBe(404);

    const ingestKey = await h.http
      .post("/api/user/keys")
      .set(auth(ctx.token))
      .send({ name: "ingest", scopes: ["ingest"] });
    const refused = await h.http
      .put(`/api/entities/${ctx.entityId}/skills/${skillId}/routine`)
      .set("X-API-Key", ingestKey.body.raw_key)
      .send(body);
    expect(refused.status).toBe(403);
    const fullKey = await h.http
      .post("/api/user/keys")
      .set(auth(ctx.token))
      .send({ name: "full", scopes: ["*"] });
    const byKey = await h.http
      .put(`/api/entities/${ctx.entityId}/skills/${skillId}/routine`)
      .set("X-API-Key", fullKey.body.raw_key)
      .send(body);
    expect(byKey.status).toBe(201);

    // An editor reads it but may not change it (recurring paid work is an admin's).
    const editor = await h.token();
    await h.http.get("/agent/v1/connection").set(auth(editor));
    await h.deps.db.workspaceMember.create({ data: { workspaceId: ctx.workspaceId, userId: await userIdOf(h, editor), role: "editor" } });
    const read = await h.http.get(`/api/entities/${ctx.entityId}/skill-routines`).set(auth(editor));
    expect(read.status).toBe(200);
    expect(read.body.routines).toHaveLength(1);
    const refusedEditor = await putRoutine(h, editor, ctx.entityId, skillId, { ...body, max_charge_cents: 150, expected_revision: 1 });
    expect(refusedEditor.status).toBe(403);
    expect(refusedEditor.body.code).toBe("forbidden");

    // An admin reads it and may change it; the routine then runs as that member.
    const member = await h.token();
    await h.http.get("/agent/v1/connection").set(auth(member));
    const memberId = await userIdOf(h, member);
    await h.deps.db.workspaceMember.create({ data: { workspaceId: ctx.workspaceId, userId: memberId, role: "admin" } });
    const listed = await h.http.get(`/api/entities/${ctx.entityId}/skill-routines`).set(auth(member));
    expect(listed.status).toBe(200);
    expect(listed.body.routines).toHaveLength(1);
    const changed = await putRoutine(h, member, ctx.entityId, skillId, { ...body, max_charge_cents: 150, expected_revision: 1 });
    expect(changed.status).toBe(200);
    expect(changed.body).toMatchObject({ revision: 2, updated_by: memberId });
  });

  it("refuses to enable when scheduled runs are switched off, but saves a paused routine", async () => {
    const ctx = await onboardCompany(h);
    const skillId = ctx.skills[0]!.id;
    const off = supertest(createApp({ ...h.deps, config: { ...h.config, ROUTINES_ENABLED: false } }));
    const path = `/api/entities/${ctx.entityId}/skills/${skillId}/routine`;
    const body = { enabled: true, interval_hours: 24, source_mode: "saved", max_charge_cents: 100, expected_revision: 0 };
    const refused = await off.put(path).set(auth(ctx.token)).send(body);
    expect(refused.status).toBe(503);
    expect(refused.body).toMatchObject({ code: "service_unavailable", scheduler_enabled: false });
    const paused = await off
      .put(path)
      .set(auth(ctx.token))
      .send({ ...body, enabled: false });
    expect(paused.status).toBe(201);
    expect(paused.body).toMatchObject({ enabled: false, next_run_at: null });
    const listed = await off.get(`/api/entities/${ctx.entityId}/skill-routines`).set(auth(ctx.token));
    expect(listed.body.scheduler_enabled).toBe(false);
  });
});

describe("GET /api/entities/{entity_id}/skill-routines and …/skills/{skill_id}/routine", () => {
  it("lists the entity's routines with the scheduler's state and heartbeat", async () => {
    const ctx = await onboardCompany(h, { objectives: 3 });
    const empty = await h.http.get(`/api/entities/${ctx.entityId}/skill-routines`).set(auth(ctx.token));
    expect(empty.status).toBe(200);
    expect(empty.body).toEqual({ entity_id: ctx.entityId, scheduler_enabled: true, scheduler_last_seen_at: null, routines: [] });

    const a = await createRoutine(h, ctx.token, ctx.entityId, ctx.skills[0]!.id);
    const b = await createRoutine(h, ctx.token, ctx.entityId, ctx.skills[2]!.id, { enabled: false, interval_hours: 168 });
    const list = await h.http.get(`/api/entities/${ctx.entityId}/skill-routines`).set(auth(ctx.token));
    expect(list.body.routines).toEqual([a, b]);

    const one = await h.http.get(`/api/entities/${ctx.entityId}/skills/${ctx.skills[0]!.id}/routine`).set(auth(ctx.token));
    expect(one.status).toBe(200);
    expect(one.body).toEqual({ ...a, occurrences: [] });
    const none = await h.http.get(`/api/entities/${ctx.entityId}/skills/${ctx.skills[1]!.id}/routine`).set(auth(ctx.token));
    expect(none.status).toBe(404);
  });
});
