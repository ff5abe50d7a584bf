import { z } from "zod";
import { optional, pathId } from "../../platform/validation.js";
import { ObjectiveId, ObjectiveInput, WorkflowInput } from "../onboarding/schemas.js";

export const MAX_SKILLS = 5;

/** A skill's id: its objective's (the caller's own), or a uuid the server gave a skill sent without one. */
export const SkillId = ObjectiveId;

export const EntityParams = z.object({ entity_id: pathId("Entity") });
export const SkillParams = z.object({ entity_id: pathId("Entity"), skill_id: pathId("Skill", SkillId) });

/**
 * A skill as sent to PUT: its id (kept when it names a current skill, created otherwise) and its
 * definition. `skill_id` is the older name of `id` and is read the same way.
 */
export const SkillInput = ObjectiveInput.omit({ id: true }).extend({ id: optional(SkillId), skill_id: optional(SkillId) });

/**
 * One skill as the caller last read it: its id, and optionally its revision and definition fields.
 * Every field given must still hold (the reference client sends the definitions it read; this service's
 * own callers send `{id, revision}`).
 */
export const ExpectedSkill = z.object({
  id: SkillId,
  revision: optional(z.number().int().min(1)),
  title: optional(z.string()),
  question: optional(z.string()),
  decision: optional(z.string()),
  evidence: optional(z.string()),
  workflow: optional(WorkflowInput),
});
export type ExpectedSkill = z.output<typeof ExpectedSkill>;

export const ReplaceSkillsBody = z
  .object({
    skills: z.array(SkillInput).max(MAX_SKILLS),
    // The set the client last read. Any difference from the stored set is a 409.
    expected_skills: z.array(ExpectedSkill).max(MAX_SKILLS),
  })
  .superRefine((body, ctx) => {
    const ids = new Set<string>();
    body.skills.forEach((skill, index) => {
      if (skill.id !== undefined && skill.skill_id !== undefined && skill.id !== skill.skill_id) {
        ctx.addIssue({
          code: "custom",
          path: ["skills", index, "skill_id"],
          message: "skill_id is the older name of id; send one of them",
          params: { type: "value_error" },
        });
      }
      const id = skill.id ?? skill.skill_id;
      if (id === undefined) return;
      if (ids.has(id)) {
        ctx.addIssue({ code: "custom", path: ["skills", index, "id"], message: "id appears twice", params: { type: "value_error" } });
      }
      ids.add(id);
    });
  });
export type ReplaceSkillsInput = z.output<typeof ReplaceSkillsBody>;

export const SkillRecord = z.object({
  id: z.string(),
  entity_id: z.uuid(),
  objective_id: z.string(),
  title: z.string(),
  name: z.string(),
  question: z.string(),
  decision: z.string(),
  evidence: z.string(),
  instructions: z.string(),
  inputs: z.record(z.string(), z.unknown()),
  model_routing: z.record(z.string(), z.unknown()),
  workflow: z.record(z.string(), z.unknown()),
  revision: z.number().int(),
  position: z.number().int(),
  created_at: z.string(),
  updated_at: z.string(),
  quote_url: z.string(),
  runs_url: z.string(),
});
export type SkillRecord = z.infer<typeof SkillRecord>;

export const SkillList = z.object({ entity_id: z.uuid(), skills: z.array(SkillRecord), count: z.number().int() });
