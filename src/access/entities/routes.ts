import { AUTH, callerId } from "../../platform/auth.js";
import type { AppDeps } from "../../platform/deps.js";
import { defineRoute } from "../../platform/http/route.js";
import { CreateEntityBody, EntityIdParams, EntityList, EntityRecord, ListEntitiesQuery, UpdateEntityBody } from "./schemas.js";
import { createEntity, getEntity, listEntities, updateEntity } from "./service.js";

const tags = ["entities"];

export const entityRoutes = (deps: AppDeps) => [
  defineRoute({
    method: "get",
    path: "/api/entities",
    summary: "List the entities the caller can see",
    tags,
    auth: AUTH.full,
    role: "viewer",
    query: ListEntitiesQuery,
    responses: { 200: { description: "Entity records, oldest first", schema: EntityList } },
    handler: async ({ query, auth }) => ({ body: await listEntities(await deps.reads.forCaller(auth), callerId(auth), query) }),
  }),
  defineRoute({
    method: "post",
    path: "/api/entities",
    summary: "Create an entity in a workspace the caller belongs to (a personal one when none is named)",
    tags,
    auth: AUTH.full,
    role: "editor",
    body: CreateEntityBody,
    responses: { 201: { description: "Created", schema: EntityRecord } },
    handler: async ({ body, auth }) => ({ status: 201, body: await createEntity(deps.db, callerId(auth), body) }),
  }),
  defineRoute({
    method: "get",
    path: "/api/entities/:entity_id",
    summary: "Read one entity",
    tags,
    auth: AUTH.full,
    role: "viewer",
    params: EntityIdParams,
    responses: { 200: { description: "The entity", schema: EntityRecord } },
    handler: async ({ params, auth }) => ({ body: await getEntity(await deps.reads.forCaller(auth), callerId(auth), params.entity_id) }),
  }),
  defineRoute({
    method: "patch",
    path: "/api/entities/:entity_id",
    summary: "Change an entity's fields; absent or null fields are left as they are",
    tags,
    auth: AUTH.full,
    role: "editor",
    params: EntityIdParams,
    body: UpdateEntityBody,
    responses: { 200: { description: "The changed entity", schema: EntityRecord } },
    handler: async ({ params, body, auth }) => ({ body: await updateEntity(deps.db, callerId(auth), params.entity_id, body) }),
  }),
];
