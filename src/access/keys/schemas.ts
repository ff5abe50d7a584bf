import { z } from "zod";
import { API_KEY_SCOPES } from "../../platform/auth.js";
import { pathId, queryInt } from "../../platform/validation.js";

export const ApiKeyScopeSchema = z.enum(API_KEY_SCOPES);

export const CreateKeyBody = z.object({
  name: z.string().trim().min(1).max(200),
  // Absent or null: the default ["ingest"]. An explicit empty list is refused.
  scopes: z
    .array(ApiKeyScopeSchema)
    .min(1, "At least one scope is required")
    .max(3)
    .nullish()
    .transform((v) => [...new Set(v ?? ["ingest" as const])]),
});

export const KeyIdParams = z.object({ key_id: pathId("API key") });

export const UsageQuery = z.object({
  limit: queryInt(1, 1000).optional(),
  offset: queryInt(0, 1_000_000_000).optional(),
});

export const ApiKeyRecord = z.object({
  id: z.uuid(),
  name: z.string(),
  key_prefix: z.string(),
  scopes: z.array(ApiKeyScopeSchema),
  is_active: z.boolean(),
  created_at: z.string(),
  revoked_at: z.string().nullable(),
  last_used_at: z.string().nullable(),
});

export const CreateKeyResponse = z.object({ key: ApiKeyRecord, raw_key: z.string() });
export const ListKeysResponse = z.object({ keys: z.array(ApiKeyRecord) });
export const UsageResponse = z.object({
  key_id: z.uuid(),
  total: z.number().int(),
  limit: z.number().int(),
  offset: z.number().int(),
  next_offset: z.number().int().nullable(),
  records: z.array(
    z.object({
      id: z.string(),
      at: z.string(),
      method: z.string(),
      route: z.string(),
      status_code: z.number().int(),
      scope_used: z.string().nullable(),
    }),
  ),
});

export type ApiKeyRecord = z.infer<typeof ApiKeyRecord>;
