import { AUTH, callerId } from "../../platform/auth.js";
import type { AppDeps } from "../../platform/deps.js";
import { defineRoute } from "../../platform/http/route.js";
import { EntityParams, SkillParams } from "../skills/schemas.js";
import { RoutineBody, RoutineDetail, RoutineList, RoutineRecord } from "./schemas.js";
import { getRoutine, listRoutines, putRoutine } from "./service.js";

const tags = ["routines"];

export const routineRoutes = (deps: AppDeps) => [
  defineRoute({
    method: "put",
    path: "/api/entities/:entity_id/skills/:skill_id/routine",
    summary: "Create, change or pause a skill's routine (a run every 24 or 168 hours, each charged at most max_charge_cents)",
    tags,
    auth: AUTH.full,
    role: "admin",
    params: SkillParams,
    body: RoutineBody,
    responses: {
      200: { description: "The routine, changed (or unchanged)", schema: RoutineRecord },
      201: { description: "The routine, created", schema: RoutineRecord },
      409: { description: "expected_revision is not the routine's revision (current_revision and routine in the body)" },
      503: { description: "Scheduled runs are switched off on this service; only a paused routine can be saved" },
    },
    handler: async ({ params, body, auth }) =>
      putRoutine(deps, callerId(auth), { entityId: params.entity_id, skillId: params.skill_id }, body),
  }),
  defineRoute({
    method: "get",
    path: "/api/entities/:entity_id/skills/:skill_id/routine",
    summary: "A skill's routine with its latest occurrences: the run each started, or why none started",
    tags,
    auth: AUTH.full,
    role: "viewer",
    params: SkillParams,
    responses: { 200: { description: "Routine", schema: RoutineDetail } },
    handler: async ({ params, auth }) => ({
      body: await getRoutine(deps.db, callerId(auth), { entityId: params.entity_id, skillId: params.skill_id }),
    }),
  }),
  defineRoute({
    method: "get",
    path: "/api/entities/:entity_id/skill-routines",
    summary: "An entity's routines, whether the scheduler is switched on, and when its dispatcher was last seen",
    tags,
    auth: AUTH.full,
    role: "viewer",
    params: EntityParams,
    responses: { 200: { description: "Routines", schema: RoutineList } },
    handler: async ({ params, auth }) => ({ body: await listRoutines(deps, callerId(auth), params.entity_id) }),
  }),
];
