import { randomUUID } from "node:crypto";
import { SKELETON_WORKFLOW, type Workflow } from "../onboarding/schemas.js";
import { canonicalJson } from "../platform/canonical.js";
import type { Db, DbTx, Prisma } from "../platform/db.js";
import { AppError, notFound } from "../platform/errors.js";
import { entityForUser } from "../workspaces/access.js";
import type { ReplaceSkillsInput, SkillRecord } from "./schemas.js";

/** Skills are the saved workflows (research objectives) of an entity. */
interface SkillRow {
  id: string;
  entityId: string;
  objectiveKey: string;
  title: string;
  question: string;
  decision: string;
  evidence: string;
  workflow: unknown;
  revision: number;
  position: number;
  createdAt: Date;
  updatedAt: Date;
}

/** The stored workflow with the skeleton filling anything older rows lack. */
export function workflowOf(row: { workflow: unknown }): Workflow {
  const stored = (row.workflow ?? {}) as Partial<Workflow>;
  return {
    ...SKELETON_WORKFLOW,
    ...stored,
    model_routing: { ...SKELETON_WORKFLOW.model_routing, ...(stored.model_routing ?? {}) },
    inputs: { ...SKELETON_WORKFLOW.inputs, ...(stored.inputs ?? {}) },
    document_destination: { ...SKELETON_WORKFLOW.document_destination, ...(stored.document_destination ?? {}) },
  };
}

export function toSkillRecord(row: SkillRow): SkillRecord {
  const workflow = workflowOf(row);
  const base = `/api/entities/${row.entityId}/skills/${row.id}`;
  return {
    id: row.id,
    entity_id: row.entityId,
    objective_id: row.objectiveKey,
    name: row.title,
    question: row.question,
    decision: row.decision,
    evidence: row.evidence,
    instructions: workflow.instructions,
    inputs: workflow.inputs as unknown as Record<string, unknown>,
    model_routing: workflow.model_routing as unknown as Record<string, unknown>,
    workflow: workflow as unknown as Record<string, unknown>,
    revision: row.revision,
    position: row.position,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
    quote_url: `${base}/quote?source_mode=refresh`,
    runs_url: `${base}/runs`,
  };
}

export async function listSkills(db: Db, userId: string, entityId: string) {
  const entity = await entityForUser(db, userId, entityId);
  const rows = await db.skill.findMany({ where: { entityId: entity.id }, orderBy: [{ position: "asc" }, { createdAt: "asc" }] });
  return { entity_id: entity.id, skills: rows.map(toSkillRecord), count: rows.length };
}

/** The skill if its entity is visible to the caller; 404 otherwise. */
export async function skillForUser(db: Db | DbTx, userId: string, entityId: string, skillId: string) {
  const entity = await entityForUser(db, userId, entityId);
  const skill = await db.skill.findFirst({ where: { id: skillId, entityId: entity.id } });
  if (!skill) throw notFound("Skill");
  return { entity, skill };
}

/**
 * Replaces an entity's whole set of skills (at most five). The caller sends the set it last read
 * (`expected_skills`: ids and revisions); if the stored set differs, nothing changes and the answer is 409
 * with the current set. Kept skills keep their id; a changed skill's revision goes up by one.
 */
export async function replaceSkills(db: Db, userId: string, entityId: string, input: ReplaceSkillsInput) {
  const entity = await entityForUser(db, userId, entityId);
  return db.$transaction(async (tx) => {
    await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext(${`skills:${entity.id}`}))`;
    const current = await tx.skill.findMany({ where: { entityId: entity.id }, orderBy: [{ position: "asc" }, { createdAt: "asc" }] });
    const key = (list: { id: string; revision: number }[]) =>
      list
        .map((s) => `${s.id}@${s.revision}`)
        .sort()
        .join(",");
    if (key(current) !== key(input.expected_skills)) {
      throw new AppError("conflict", "The entity's skills changed since they were read; read them again and resend.", {
        extra: { current_skills: current.map((s) => ({ id: s.id, revision: s.revision })) },
      });
    }
    const byId = new Map(current.map((s) => [s.id, s]));
    for (const [index, skill] of input.skills.entries()) {
      if (skill.skill_id && !byId.has(skill.skill_id)) {
        throw new AppError("not_found", `Skill ${skill.skill_id} (skills[${index}]) is not a skill of this entity.`);
      }
    }
    const kept = new Set(input.skills.map((s) => s.skill_id).filter((id): id is string => id !== undefined));
    await tx.skill.deleteMany({ where: { entityId: entity.id, id: { notIn: [...kept] } } });
    for (const [index, skill] of input.skills.entries()) {
      const existing = skill.skill_id ? byId.get(skill.skill_id) : undefined;
      const data = {
        objectiveKey: skill.id ?? existing?.objectiveKey ?? `objective-${index + 1}`,
        title: skill.title,
        question: skill.question,
        decision: skill.decision,
        evidence: skill.evidence,
        workflow: skill.workflow as unknown as Prisma.InputJsonValue,
        position: index,
      };
      if (existing) {
        const before = canonicalJson({ ...pick(existing), workflow: workflowOf(existing) });
        const changed = before !== canonicalJson({ ...data, workflow: skill.workflow });
        await tx.skill.update({ where: { id: existing.id }, data: { ...data, ...(changed ? { revision: { increment: 1 } } : {}) } });
      } else {
        await tx.skill.create({ data: { id: randomUUID(), entityId: entity.id, projectId: entity.projectId, ...data } });
      }
    }
    const rows = await tx.skill.findMany({ where: { entityId: entity.id }, orderBy: [{ position: "asc" }, { createdAt: "asc" }] });
    return { entity_id: entity.id, skills: rows.map(toSkillRecord), count: rows.length };
  });
}

const pick = (s: SkillRow) => ({
  objectiveKey: s.objectiveKey,
  title: s.title,
  question: s.question,
  decision: s.decision,
  evidence: s.evidence,
  position: s.position,
});
