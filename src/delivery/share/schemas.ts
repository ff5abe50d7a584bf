import { z } from "zod";
import { optional, pathId, queryInt, withDefault } from "../../platform/validation.js";

/**
 * Share links (`/api/share-links`): a URL that opens one read-only page (an analysis, a knowledge
 * record or an entity) without signing in, until it expires or is revoked.
 */
export const SHARE_RESOURCES = ["analysis", "knowledge_record", "entity"] as const;
export type ShareResource = (typeof SHARE_RESOURCES)[number];

const DAY_S = 86_400;
export const DEFAULT_EXPIRES_IN_S = 7 * DAY_S;
export const MAX_EXPIRES_IN_S = 90 * DAY_S;
export const MIN_EXPIRES_IN_S = 60;

export const CreateShareLinkBody = z.object({
  resource: z.enum(SHARE_RESOURCES),
  id: z.uuid().describe("The analysis, knowledge record or entity id"),
  expires_in: withDefault(z.number().int().min(MIN_EXPIRES_IN_S).max(MAX_EXPIRES_IN_S), DEFAULT_EXPIRES_IN_S).describe(
    "Seconds until the link stops opening its page: 60 to 7,776,000 (90 days); default 604,800 (7 days)",
  ),
});
export type CreateShareLinkInput = z.output<typeof CreateShareLinkBody>;

export const ListShareLinksQuery = z.object({
  workspace_id: z.uuid(),
  resource: optional(z.enum(SHARE_RESOURCES)),
  id: optional(z.uuid()).describe("Only the links to this resource id"),
  limit: queryInt(1, 500).optional(),
  offset: queryInt(0, 1_000_000_000).optional(),
});
export type ListShareLinksQuery = z.output<typeof ListShareLinksQuery>;

export const ShareLinkParams = z.object({ share_link_id: pathId("Share link") });

export const SHARE_LINK_STATES = ["active", "expired", "revoked"] as const;

export const ShareLinkRecord = z.object({
  id: z.uuid(),
  workspace_id: z.uuid(),
  resource: z.enum(SHARE_RESOURCES),
  resource_id: z.uuid(),
  state: z.enum(SHARE_LINK_STATES),
  created_by: z.uuid().nullable(),
  created_at: z.string(),
  expires_at: z.string(),
  revoked_at: z.string().nullable(),
});
export type ShareLinkRecord = z.infer<typeof ShareLinkRecord>;

export const CreatedShareLink = ShareLinkRecord.extend({
  url: z.string().describe("Opens the page without signing in; shown only in this answer (the service keeps only a hash of its token)"),
});
export type CreatedShareLink = z.infer<typeof CreatedShareLink>;

export const ShareLinkList = z.object({
  links: z.array(ShareLinkRecord),
  total: z.number().int(),
  limit: z.number().int(),
  offset: z.number().int(),
});
