import { z } from "zod";
import { ObjectiveInput } from "../onboarding/schemas.js";
import { optional, pathId } from "../platform/validation.js";

export const MAX_SKILLS = 5;

export const EntityParams = z.object({ entity_id: pathId("Entity") });
export const SkillParams = z.object({ entity_id: pathId("Entity"), skill_id: pathId("Skill") });

/** A skill as sent to PUT: an objective, plus the id of an existing skill to keep it in place. */
export const SkillInput = ObjectiveInput.extend({ skill_id: optional(z.uuid()) });

export const ReplaceSkillsBody = z
  .object({
    skills: z.array(SkillInput).max(MAX_SKILLS),
    // The set the client last read: every current skill's id and revision. Any difference is a 409.
    expected_skills: z.array(z.object({ id: z.uuid(), revision: z.number().int().min(1) })).max(MAX_SKILLS),
  })
  .superRefine((body, ctx) => {
    const ids = new Set<string>();
    body.skills.forEach((skill, index) => {
      if (!skill.skill_id) return;
      if (ids.has(skill.skill_id)) {
        ctx.addIssue({ code: "custom", path: ["skills", index, "skill_id"], message: "skill_id appears twice" });
      }
      ids.add(skill.skill_id);
    });
  });
export type ReplaceSkillsInput = z.output<typeof ReplaceSkillsBody>;

export const SkillRecord = z.object({
  id: z.uuid(),
  entity_id: z.uuid(),
  objective_id: z.string(),
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
