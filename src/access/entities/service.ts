import type { Prisma } from "../../generated/prisma/client.js";
import type { Db, DbTx } from "../../platform/db.js";
import { notFound, ValidationFailed } from "../../platform/errors.js";
import {
  activeWorkspaceOf,
  entityForUser,
  isMember,
  personalWorkspace,
  projectForUser,
  requireWriter,
  visibleWorkspaceIds,
  writableEntityForUser,
} from "../workspaces/access.js";
import type { CreateEntityInput, EntityKind, EntityRecord, ListEntitiesFilter, UpdateEntityInput } from "./schemas.js";

/**
 * Entity records: what the caller can see, create and change. Every read and write is
 * checked against workspace membership; anything else is reported as not found.
 */
interface EntityRow {
  id: string;
  workspaceId: string;
  projectId: string | null;
  parentEntityId: string | null;
  kind: string;
  name: string;
  url: string;
  keywords: string[];
  collectionTargets: Prisma.JsonValue;
  platforms: string[];
  createdAt: Date;
  updatedAt: Date;
}

export function toEntityRecord(row: EntityRow): EntityRecord {
  const targets = row.collectionTargets;
  return {
    id: row.id,
    workspace_id: row.workspaceId,
    project_id: row.projectId,
    parent_entity_id: row.parentEntityId,
    kind: row.kind as EntityKind,
    name: row.name,
    url: row.url,
    keywords: row.keywords,
    collection_targets: targets && typeof targets === "object" && !Array.isArray(targets) ? (targets as Record<string, unknown>) : {},
    platforms: row.platforms,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

const invalid = (field: string, msg: string) => new ValidationFailed([{ loc: ["body", field], msg, type: "value_error" }]);

export async function listEntities(db: Db, userId: string, filter: ListEntitiesFilter = {}): Promise<EntityRecord[]> {
  const rows = await db.entity.findMany({
    where: {
      workspace: activeWorkspaceOf(userId),
      ...(filter.workspace_id ? { workspaceId: filter.workspace_id } : {}),
      ...(filter.project_id ? { projectId: filter.project_id } : {}),
      ...(filter.kind ? { kind: filter.kind } : {}),
    },
    orderBy: [{ createdAt: "asc" }, { id: "asc" }],
  });
  return rows.map(toEntityRecord);
}

export async function getEntity(db: Db, userId: string, entityId: string): Promise<EntityRecord> {
  return toEntityRecord(await entityForUser(db, userId, entityId));
}

/**
 * The workspace a new entity goes to: the one named (the caller must be a member), else
 * the named project's, else the caller's only workspace, else the personal workspace
 * (created on first need).
 */
async function targetWorkspace(db: Db, userId: string, input: { workspace_id?: string; project_id?: string }): Promise<string> {
  const workspaceId = await namedWorkspace(db, userId, input);
  await requireWriter(db, userId, workspaceId, "create entities");
  return workspaceId;
}

async function namedWorkspace(db: Db, userId: string, input: { workspace_id?: string; project_id?: string }): Promise<string> {
  if (input.workspace_id) {
    if (!(await isMember(db, userId, input.workspace_id))) throw notFound("Workspace");
    return input.workspace_id;
  }
  if (input.project_id) return (await projectForUser(db, userId, input.project_id)).workspaceId;
  const memberships = await visibleWorkspaceIds(db, userId);
  if (memberships.length === 1 && memberships[0]) return memberships[0];
  return personalWorkspace(db, userId);
}

async function checkProject(db: Db | DbTx, userId: string, workspaceId: string, projectId: string): Promise<void> {
  const project = await projectForUser(db, userId, projectId);
  if (project.workspaceId !== workspaceId) throw invalid("project_id", "The project belongs to another workspace than the entity.");
}

async function checkParent(db: Db | DbTx, userId: string, workspaceId: string, parentId: string, selfId?: string): Promise<void> {
  const parent = await entityForUser(db, userId, parentId);
  if (parent.workspaceId !== workspaceId) throw invalid("parent_entity_id", "The parent entity belongs to another workspace.");
  if (!selfId) return;
  // Walk up from the new parent; meeting the entity itself would make a cycle.
  const chain = await db.$queryRaw<{ id: string }[]>`
    WITH RECURSIVE up(id, parent, depth) AS (
      SELECT id, parent_entity_id, 0 FROM entities WHERE id = ${parentId}::uuid
      UNION ALL
      SELECT e.id, e.parent_entity_id, up.depth + 1 FROM entities e JOIN up ON e.id = up.parent WHERE up.depth < 100
    )
    SELECT id FROM up WHERE id = ${selfId}::uuid LIMIT 1`;
  if (chain.length > 0) throw invalid("parent_entity_id", "An entity cannot be its own ancestor.");
}

export async function createEntity(db: Db, userId: string, input: CreateEntityInput): Promise<EntityRecord> {
  const workspaceId = await targetWorkspace(db, userId, input);
  if (input.project_id) await checkProject(db, userId, workspaceId, input.project_id);
  if (input.parent_entity_id) await checkParent(db, userId, workspaceId, input.parent_entity_id);
  const row = await db.entity.create({
    data: {
      workspaceId,
      projectId: input.project_id ?? null,
      parentEntityId: input.parent_entity_id ?? null,
      kind: input.kind,
      name: input.name,
      url: input.url,
      keywords: input.keywords,
      platforms: input.platforms,
      collectionTargets: input.collection_targets as Prisma.InputJsonObject,
    },
  });
  return toEntityRecord(row);
}

export async function updateEntity(db: Db, userId: string, entityId: string, patch: UpdateEntityInput): Promise<EntityRecord> {
  const current = await writableEntityForUser(db, userId, entityId, "change entities");
  if (patch.workspace_id && patch.workspace_id !== current.workspaceId) {
    // Stored evidence carries its workspace; entities do not move between workspaces.
    throw invalid("workspace_id", "An entity cannot move to another workspace.");
  }
  if (patch.project_id) await checkProject(db, userId, current.workspaceId, patch.project_id);
  if (patch.parent_entity_id) await checkParent(db, userId, current.workspaceId, patch.parent_entity_id, current.id);
  const row = await db.entity.update({
    where: { id: current.id },
    data: {
      ...(patch.name !== undefined ? { name: patch.name } : {}),
      ...(patch.kind !== undefined ? { kind: patch.kind } : {}),
      ...(patch.url !== undefined ? { url: patch.url } : {}),
      ...(patch.keywords !== undefined ? { keywords: patch.keywords } : {}),
      ...(patch.platforms !== undefined ? { platforms: patch.platforms } : {}),
      ...(patch.collection_targets !== undefined ? { collectionTargets: patch.collection_targets as Prisma.InputJsonObject } : {}),
      ...(patch.project_id !== undefined ? { projectId: patch.project_id } : {}),
      ...(patch.parent_entity_id !== undefined ? { parentEntityId: patch.parent_entity_id } : {}),
    },
  });
  return toEntityRecord(row);
}
