import { randomUUID } from "node:crypto";
import { entityForUser, writableEntityForUser } from "../../access/workspaces/access.js";
import { canonicalJson } from "../../platform/canonical.js";
import type { Db, DbTx, Prisma } from "../../platform/db.js";
import { AppError, notFound } from "../../platform/errors.js";
import { SKELETON_WORKFLOW, type Workflow } from "../onboarding/schemas.js";
import type { ExpectedSkill, ReplaceSkillsInput, SkillRecord } from "./schemas.js";

/**
 * Skills are the saved workflows (research objectives) of an entity. A skill's public id is its `key`:
 * the id its caller chose ("launch-review") or, when none was given, the row's uuid. Every route that
 * takes `{skill_id}` takes that id; runs, routines and quotes point at the row and remember the key.
 */
interface SkillRow {
  id: string;
  key: string;
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

/** The path of a skill, its id encoded as one segment. */
export const skillPath = (entityId: string, key: string) => `/api/entities/${entityId}/skills/${encodeURIComponent(key)}`;

export function toSkillRecord(row: SkillRow): SkillRecord {
  const workflow = workflowOf(row);
  const base = skillPath(row.entityId, row.key);
  return {
    id: row.key,
    entity_id: row.entityId,
    objective_id: row.objectiveKey,
    title: row.title,
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

const ORDER = [{ position: "asc" as const }, { createdAt: "asc" as const }];

const skillList = (entityId: string, rows: SkillRow[]) => ({ entity_id: entityId, skills: rows.map(toSkillRecord), count: rows.length });

export async function listSkills(db: Db, userId: string, entityId: string) {
  const entity = await entityForUser(db, userId, entityId);
  return skillList(entity.id, await db.skill.findMany({ where: { entityId: entity.id }, orderBy: ORDER }));
}

/** The skill (by its id) if its entity is visible to the caller; 404 otherwise. */
export async function skillForUser(db: Db | DbTx, userId: string, entityId: string, skillId: string) {
  const entity = await entityForUser(db, userId, entityId);
  const skill = await db.skill.findUnique({ where: { entityId_key: { entityId: entity.id, key: skillId } } });
  if (!skill) throw notFound("Skill");
  return { entity, skill };
}

/** What an edit compares: the definition a caller sends and reads back. */
const definitionOf = (s: { title: string; question: string; decision: string; evidence: string; workflow: unknown }) =>
  canonicalJson({ title: s.title, question: s.question, decision: s.decision, evidence: s.evidence, workflow: workflowOf(s) });

/** Whether one skill the caller read still holds: its id, and every revision or definition field it sent. */
function stillHolds(expected: ExpectedSkill, current: SkillRow): boolean {
  if (expected.revision !== undefined && expected.revision !== current.revision) return false;
  for (const field of ["title", "question", "decision", "evidence"] as const) {
    if (expected[field] !== undefined && expected[field] !== current[field]) return false;
  }
  if (expected.workflow !== undefined && canonicalJson(expected.workflow) !== canonicalJson(workflowOf(current))) return false;
  return true;
}

function matchesExpected(current: SkillRow[], expected: ExpectedSkill[]): boolean {
  if (current.length !== expected.length) return false;
  const byKey = new Map(current.map((s) => [s.key, s]));
  const seen = new Set<string>();
  for (const item of expected) {
    const row = byKey.get(item.id);
    if (!row || seen.has(item.id) || !stillHolds(item, row)) return false;
    seen.add(item.id);
  }
  return true;
}

/**
 * Replaces an entity's whole set of skills (at most five). The caller sends the set it last read
 * (`expected_skills`); if the stored set differs, nothing changes and the answer is 409 with the current
 * skills. A skill sent with the id of a current skill keeps its id and row (its revision goes up by one
 * when its definition or place changed); a new id creates a skill; a current skill left out is removed.
 * A request whose desired set is already stored (a retry after a lost answer) changes nothing and
 * answers that set.
 */
export async function replaceSkills(db: Db, userId: string, entityId: string, input: ReplaceSkillsInput) {
  const entity = await writableEntityForUser(db, userId, entityId, "change skills");
  const desired = input.skills.map((skill, index) => ({
    key: skill.id ?? skill.skill_id,
    title: skill.title,
    question: skill.question,
    decision: skill.decision,
    evidence: skill.evidence,
    workflow: skill.workflow,
    position: index,
  }));
  return db.$transaction(async (tx) => {
    await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext(${`skills:${entity.id}`}))`;
    const current = await tx.skill.findMany({ where: { entityId: entity.id }, orderBy: ORDER });
    const alreadyStored =
      current.length === desired.length &&
      desired.every((d, i) => d.key === current[i]!.key && definitionOf(d) === definitionOf(current[i]!));
    if (alreadyStored) return skillList(entity.id, current);
    if (!matchesExpected(current, input.expected_skills)) {
      throw new AppError("conflict", "The entity's skills changed since they were read; read them again, merge and resend.", {
        extra: { current_skills: current.map(toSkillRecord) },
      });
    }
    const byKey = new Map(current.map((s) => [s.key, s]));
    const kept = new Set(desired.flatMap((d) => (d.key !== undefined && byKey.has(d.key) ? [d.key] : [])));
    await tx.skill.deleteMany({ where: { entityId: entity.id, key: { notIn: [...kept] } } });
    for (const skill of desired) {
      const existing = skill.key !== undefined ? byKey.get(skill.key) : undefined;
      const data = {
        title: skill.title,
        question: skill.question,
        decision: skill.decision,
        evidence: skill.evidence,
        workflow: skill.workflow as unknown as Prisma.InputJsonValue,
        position: skill.position,
      };
      if (existing) {
        const changed = definitionOf(existing) !== definitionOf(skill) || existing.position !== skill.position;
        if (changed) await tx.skill.update({ where: { id: existing.id }, data: { ...data, revision: { increment: 1 } } });
      } else {
        const id = randomUUID();
        const key = skill.key ?? id;
        await tx.skill.create({ data: { id, key, objectiveKey: key, entityId: entity.id, projectId: entity.projectId, ...data } });
      }
    }
    return skillList(entity.id, await tx.skill.findMany({ where: { entityId: entity.id }, orderBy: ORDER }));
  });
}
