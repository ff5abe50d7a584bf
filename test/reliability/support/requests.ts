import { randomUUID } from "node:crypto";
import fc from "fast-check";
import type { AnyRoute } from "../../../src/platform/http/route.js";
import { fillPath, type Known, sampleValid } from "./arbitraries.js";
import { type RawResponse, rawRequest } from "./http.js";
import { WORLD_QUOTE, type World } from "./world.js";

/**
 * Requests that are valid for a route in one world: every id field set to that world's own ids,
 * optional fields that are not ids left out. The tenancy and role-matrix suites build theirs here.
 */
export interface Shaped {
  path: string;
  query: Record<string, string>;
  body: Record<string, unknown> | undefined;
}

/** Id-valued request fields, by name (the same names as path parameters). */
export const idNames = (world: World) => Object.keys(world.ids);

export const shapeOf = (schema: unknown): Record<string, unknown> =>
  (schema as { _zod?: { def?: { shape?: Record<string, unknown> } } } | undefined)?._zod?.def?.shape ?? {};

const known = (world: World): Known =>
  Object.fromEntries(Object.entries(world.ids).map(([name, values]) => [name, () => fc.constant(values[0])]));

/** Sampling a valid request is the slow part of a call: each route's is made once per world, then copied. */
const sampled = new WeakMap<AnyRoute, Map<string, Omit<Shaped, "path">>>();

/** A request valid for the route with every id field set to `world`'s own ids. */
export function validRequest(route: AnyRoute, world: World, params: Record<string, string>): Shaped {
  const byWorld = sampled.get(route) ?? new Map<string, Omit<Shaped, "path">>();
  sampled.set(route, byWorld);
  const key = `${world.sub}:${JSON.stringify(world.ids)}`;
  let made = byWorld.get(key);
  if (!made) {
    made = sampleRequest(route, world);
    byWorld.set(key, made);
  }
  return { path: fillPath(route.path, aimed(route, world, params)), ...structuredClone(made) };
}

/**
 * A delete removes what it names: the content delete is aimed at the world's spare original when it
 * would name the world's first content id (the one every other route reads), a workspace's deletion
 * and restore at the world's spare workspace, the entity delete (and its progress read) at the world's
 * spare entity, the project delete (and its progress read) at its spare project and the record delete at its
 * spare record. Ids of another world (a tenancy probe) are left as they are.
 */
function aimed(route: AnyRoute, world: World, params: Record<string, string>): Record<string, string> {
  const deletesContent = route.method === "delete" && route.path === "/agent/v1/content/:content_id";
  if (deletesContent && params.content_id === world.ids.content_id?.[0]) return { ...params, content_id: world.spareContentId };
  // Deleting and restoring a workspace act on the world's spare workspace.
  const deletesWorkspace =
    (route.method === "delete" && route.path === "/api/workspaces/:workspace_id") || route.path === "/api/workspaces/:workspace_id/restore";
  if (deletesWorkspace && params.workspace_id === world.ids.workspace_id?.[0]) return { ...params, workspace_id: world.spareWorkspaceId };
  // The entity delete and its progress read name the world's spare entity (its deletion requested as the world was built).
  const entityDeletion =
    (route.method === "delete" && route.path === "/api/entities/:entity_id") || route.path === "/api/entities/:entity_id/deletion";
  if (entityDeletion && params.entity_id === world.ids.entity_id?.[0]) return { ...params, entity_id: world.spareEntityId };
  // The project delete and its progress read name the world's spare project (its deletion requested as the world was built).
  const projectDeletion =
    (route.method === "delete" && route.path === "/api/projects/:project_id") || route.path === "/api/projects/:project_id/deletion";
  if (projectDeletion && params.project_id === world.ids.project_id?.[0]) return { ...params, project_id: world.spareProjectId };
  const deletesRecord = route.method === "delete" && route.path === "/agent/v1/knowledge/insights/:insight_id";
  if (deletesRecord && params.insight_id === world.ids.insight_id?.[0]) return { ...params, insight_id: world.spareInsightId };
  return params;
}

function sampleRequest(route: AnyRoute, world: World): Omit<Shaped, "path"> {
  const ids = (value: Record<string, unknown>) => {
    for (const name of idNames(world)) if (name in value) value[name] = world.ids[name]?.[0];
    if (Array.isArray(value.provided_sources)) value.provided_sources = [{ content_id: world.contentId }];
    return value;
  };
  // Minimal: optional fields that are not ids are left out, so only the ids can fail.
  const minimal = (schema: { safeParse: (v: unknown) => { success: boolean } }, value: Record<string, unknown>) => {
    for (const key of Object.keys(value)) {
      if (idNames(world).includes(key) || key === "provided_sources") continue;
      const { [key]: _dropped, ...rest } = value;
      if (schema.safeParse(rest).success) delete value[key];
    }
    return value;
  };
  const query = route.query ? ids(minimal(route.query, sampleValid<Record<string, unknown>>(route.query, known(world), 11))) : {};
  const body = route.body ? ids(minimal(route.body, sampleValid<Record<string, unknown>>(route.body, known(world), 11))) : undefined;
  if (route.path.startsWith("/agent/v1/knowledge/")) knowledgeRequest(route, world, query, body);
  // Observations name their entity per item too: the world's own, so only the swapped field can fail.
  if (route.path === "/api/observations/submit" && body) body.observations = [{ content: "An observation", entity_id: world.entityId }];
  // A share link names its resource by kind and `id`: the world's entity.
  if (route.path === "/api/share-links" && body) Object.assign(body, { resource: "entity", id: world.entityId });
  return {
    query: Object.fromEntries(Object.entries(query).map(([k, v]) => [k, String(v)])),
    body,
  };
}

/**
 * Knowledge records: a request is valid only in the world record's own scope (its entity), with
 * citations that quote the stored source verbatim and, for a revision, the revision it revises
 * (the world's record is at 1: the first revision sent succeeds, the same request again replays,
 * so each route sends one request id).
 */
function knowledgeRequest(route: AnyRoute, world: World, query: Record<string, unknown>, body: Record<string, unknown> | undefined) {
  for (const value of [query, body]) {
    // Reads and the record delete name the scope in the query, writes in the body.
    if (!value || !("entity_id" in shapeOf(route.method === "get" || route.method === "delete" ? route.query : route.body))) continue;
    delete value.project_id;
    value.entity_id = world.entityId;
  }
  if (!body) return;
  if (Array.isArray(body.evidence)) body.evidence = [{ content_id: world.contentId, quote: WORLD_QUOTE }];
  if (route.method === "put") body.expected_revision = 1;
  body.request_id = `tenancy-${route.method}-${world.sub}`;
}

/** The credentials a route takes from a world's user: their bearer, and their `*` key where keys are allowed. */
export function callers(route: AnyRoute, token: string, allKey: string): [string, Record<string, string>][] {
  if ("public" in route.auth) return [];
  const out: [string, Record<string, string>][] = [];
  if (route.auth.bearer) out.push(["bearer", { Authorization: `Bearer ${token}` }]);
  if (route.auth.keys.includes("*")) out.push(["* key", { "X-API-Key": allKey }]);
  return out;
}

/** Sends a shaped request to the route on a listening server. */
export function sendShaped(port: number, route: AnyRoute, req: Shaped, headers: Record<string, string>): Promise<RawResponse> {
  const qs = new URLSearchParams(req.query).toString();
  return rawRequest(port, {
    method: route.method.toUpperCase(),
    path: req.path + (qs ? `?${qs}` : ""),
    headers: { ...headers, "content-type": "application/json", "idempotency-key": `shaped-${randomUUID()}` },
    ...(req.body === undefined ? {} : { body: JSON.stringify(req.body) }),
  });
}
