import { expect } from "vitest";
import type { Harness } from "../helpers/harness.js";

export const auth = (token: string) => ({ Authorization: `Bearer ${token}` });

export interface RoutineSettings {
  enabled: boolean;
  interval_hours: number;
  source_mode: "saved" | "refresh";
  max_charge_cents: number;
  expected_revision: number;
}

export const putRoutine = (h: Harness, token: string, entityId: string, skillId: string, body: Partial<RoutineSettings> | object) =>
  h.http.put(`/api/entities/${entityId}/skills/${skillId}/routine`).set(auth(token)).send(body);

/** Creates an enabled routine and returns its record. */
export async function createRoutine(h: Harness, token: string, entityId: string, skillId: string, settings: Partial<RoutineSettings> = {}) {
  const res = await putRoutine(h, token, entityId, skillId, {
    enabled: true,
    interval_hours: 24,
    source_mode: "saved",
    max_charge_cents: 500,
    expected_revision: 0,
    ...settings,
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body as RoutineRecord;
}

export interface RoutineRecord {
  skill_id: string;
  entity_id: string;
  revision: number;
  enabled: boolean;
  interval_hours: number;
  source_mode: string;
  max_charge_cents: number;
  next_run_at: string | null;
  last_run_at: string | null;
  last_run_id: string | null;
  last_outcome: string | null;
  last_outcome_detail: string | null;
  last_occurrence_at: string | null;
  created_at: string;
  updated_at: string;
  updated_by: string;
}

/** The user id behind a bearer (the user row exists once the token was used). */
export async function userIdOf(h: Harness, token: string): Promise<string> {
  const sub = JSON.parse(Buffer.from(token.split(".")[1] ?? "", "base64url").toString("utf8")).sub as string;
  return (await h.deps.db.user.findUniqueOrThrow({ where: { sub } })).id;
}

/** Runs started by routines, oldest occurrence first (of one skill, named by its entity and id). */
export async function routineRuns(h: Harness, where: { entityId?: string; skillId?: string } = {}) {
  return h.deps.db.workflowRun.findMany({
    where: { routineId: { not: null }, entityId: where.entityId, skillKey: where.skillId },
    orderBy: [{ routineOccurrenceAt: "asc" }],
  });
}

/** Resolves at wall-clock time `at` (the point of these tests is time passing on a compressed clock). */
export const reach = (at: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, at - Date.now())));
