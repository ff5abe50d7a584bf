import { z } from "zod";
import { linkUrl } from "../../platform/links.js";
import { optional, pathId, withDefault } from "../../platform/validation.js";
import { Platform } from "../../platform/vocabulary.js";

/** An entity is a tracked company, product or competitor; evidence is stored per entity. */
export const ENTITY_KINDS = ["company", "product", "competitor"] as const;
export const EntityKind = z.enum(ENTITY_KINDS);
export type EntityKind = z.infer<typeof EntityKind>;

const Name = z.string().trim().min(1).max(500);
const Url = linkUrl({ max: 5000, trim: true });
const Keywords = z.array(z.string().trim().min(1).max(200)).max(100);
const Platforms = z
  .array(Platform)
  .max(50)
  .transform((v) => [...new Set(v)]);
const CollectionTargets = z.record(z.string(), z.unknown());

export const CreateEntityBody = z.object({
  name: Name,
  kind: withDefault(EntityKind, "company"),
  url: withDefault(Url, ""),
  keywords: withDefault(Keywords, []),
  platforms: withDefault(Platforms, []),
  collection_targets: withDefault(CollectionTargets, {}),
  workspace_id: optional(z.uuid()),
  project_id: optional(z.uuid()),
  parent_entity_id: optional(z.uuid()),
});
export type CreateEntityInput = z.output<typeof CreateEntityBody>;

/** Every field optional; an absent or null field is left as it is. */
export const UpdateEntityBody = z.object({
  name: optional(Name),
  kind: optional(EntityKind),
  url: optional(Url),
  keywords: optional(Keywords),
  platforms: optional(Platforms),
  collection_targets: optional(CollectionTargets),
  workspace_id: optional(z.uuid()),
  project_id: optional(z.uuid()),
  parent_entity_id: optional(z.uuid()),
});
export type UpdateEntityInput = z.output<typeof UpdateEntityBody>;

/** An entity id that is not a visible entity's uuid is a 404. */
export const EntityIdParams = z.object({ entity_id: pathId("Entity") });

export const ListEntitiesQuery = z.object({
  workspace_id: z.uuid().optional(),
  project_id: z.uuid().optional(),
  kind: EntityKind.optional(),
});
export type ListEntitiesFilter = z.output<typeof ListEntitiesQuery>;

export const EntityRecord = z.object({
  id: z.uuid(),
  workspace_id: z.uuid(),
  project_id: z.uuid().nullable(),
  parent_entity_id: z.uuid().nullable(),
  kind: EntityKind,
  name: z.string(),
  url: z.string(),
  keywords: z.array(z.string()),
  collection_targets: z.record(z.string(), z.unknown()),
  platforms: z.array(z.string()),
  created_at: z.string(),
  updated_at: z.string(),
});
export type EntityRecord = z.infer<typeof EntityRecord>;
export const EntityList = z.array(EntityRecord);
