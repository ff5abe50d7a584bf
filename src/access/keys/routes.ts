import { AUTH, callerId } from "../../platform/auth.js";
import type { AppDeps } from "../../platform/deps.js";
import { defineRoute } from "../../platform/http/route.js";
import { ApiKeyRecord, CreateKeyBody, CreateKeyResponse, KeyIdParams, ListKeysResponse, UsageQuery, UsageResponse } from "./schemas.js";
import { createKey, keyUsage, listKeys, revokeKey } from "./service.js";

const tags = ["keys"];
const userOf = callerId;

export const keyRoutes = (deps: AppDeps) => [
  defineRoute({
    method: "post",
    path: "/api/user/keys",
    summary: "Create a scoped API key (the raw key is returned once)",
    tags,
    auth: AUTH.bearerOnly,
    role: "account",
    body: CreateKeyBody,
    responses: { 201: { description: "Created", schema: CreateKeyResponse } },
    handler: async ({ body, auth }) => ({ status: 201, body: await createKey(deps.db, userOf(auth), body) }),
  }),
  defineRoute({
    method: "get",
    path: "/api/user/keys",
    summary: "List the caller's keys, masked",
    tags,
    auth: AUTH.bearerOnly,
    role: "account",
    responses: { 200: { description: "Keys", schema: ListKeysResponse } },
    handler: async ({ auth }) => ({ body: await listKeys(deps.db, userOf(auth)) }),
  }),
  defineRoute({
    method: "delete",
    path: "/api/user/keys/:key_id",
    summary: "Revoke a key; it is refused from the next request on",
    tags,
    auth: AUTH.bearerOnly,
    role: "account",
    params: KeyIdParams,
    responses: { 200: { description: "The revoked key", schema: ApiKeyRecord } },
    handler: async ({ params, auth }) => ({ body: await revokeKey(deps.db, userOf(auth), params.key_id) }),
  }),
  defineRoute({
    method: "get",
    path: "/api/user/keys/:key_id/usage",
    summary: "Read the stored usage records of one key, newest first",
    tags,
    auth: AUTH.bearerOnly,
    role: "account",
    params: KeyIdParams,
    query: UsageQuery,
    responses: { 200: { description: "Usage", schema: UsageResponse } },
    handler: async ({ params, query, auth }) => ({
      body: await keyUsage(deps.db, userOf(auth), params.key_id, { limit: query.limit ?? 100, offset: query.offset ?? 0 }),
    }),
  }),
];
