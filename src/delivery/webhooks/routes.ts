import { AUTH, callerId } from "../../platform/auth.js";
import type { AppDeps } from "../../platform/deps.js";
import { defineRoute } from "../../platform/http/route.js";
import {
  CreatedEndpoint,
  CreateEndpointBody,
  DeliveriesQuery,
  EndpointParams,
  EndpointRecord,
  ListDeliveriesResponse,
  ListEndpointsResponse,
  UpdateEndpointBody,
  WorkspaceParams,
} from "./schemas.js";
import { createEndpoint, deleteEndpoint, enableEndpoint, getEndpoint, listDeliveries, listEndpoints } from "./service.js";

const tags = ["webhooks"];
const base = "/api/workspaces/:workspace_id/webhooks";

export const webhookRoutes = (deps: AppDeps) => [
  defineRoute({
    method: "post",
    path: base,
    summary: "Register a webhook endpoint (its signing secret is returned once)",
    description:
      "Deliveries follow Standard Webhooks: `webhook-id`, `webhook-timestamp` and `webhook-signature` headers. " +
      "`event_types` empty or absent: every job end. The URL must be http(s) and, unless the operator allows " +
      "private URLs, reach a public address. A workspace has at most 20 live endpoints (the operator's " +
      "WEBHOOK_MAX_ENDPOINTS): one more is a 422.",
    tags,
    auth: AUTH.full,
    role: "admin",
    params: WorkspaceParams,
    body: CreateEndpointBody,
    responses: {
      201: { description: "Created; `secret` is not shown again", schema: CreatedEndpoint },
      503: { description: "SECRETS_KEY is not configured on this server" },
    },
    handler: async ({ params, body, auth }) => ({
      status: 201,
      body: await createEndpoint(deps, callerId(auth), params.workspace_id, body),
    }),
  }),
  defineRoute({
    method: "get",
    path: base,
    summary: "List a workspace's webhook endpoints",
    tags,
    auth: AUTH.full,
    role: "viewer",
    params: WorkspaceParams,
    responses: { 200: { description: "Endpoints, oldest first", schema: ListEndpointsResponse } },
    handler: async ({ params, auth }) => ({ body: await listEndpoints(deps, callerId(auth), params.workspace_id) }),
  }),
  defineRoute({
    method: "get",
    path: `${base}/:endpoint_id`,
    summary: "Read one webhook endpoint",
    tags,
    auth: AUTH.full,
    role: "viewer",
    params: EndpointParams,
    responses: { 200: { description: "The endpoint", schema: EndpointRecord } },
    handler: async ({ params, auth }) => ({
      body: await getEndpoint(deps, callerId(auth), params.workspace_id, params.endpoint_id),
    }),
  }),
  defineRoute({
    method: "patch",
    path: `${base}/:endpoint_id`,
    summary: "Enable a paused or disabled webhook endpoint again",
    description:
      '`{state: "enabled"}` lifts a pause or undoes a disable and resets `consecutive_failures`. Deliveries a ' +
      "disable ended stay failed; job ends from now on are delivered. Enabling an enabled endpoint changes nothing.",
    tags,
    auth: AUTH.full,
    role: "admin",
    params: EndpointParams,
    body: UpdateEndpointBody,
    responses: { 200: { description: "The endpoint, enabled", schema: EndpointRecord } },
    handler: async ({ params, auth }) => ({
      body: await enableEndpoint(deps, callerId(auth), params.workspace_id, params.endpoint_id),
    }),
  }),
  defineRoute({
    method: "get",
    path: `${base}/:endpoint_id/deliveries`,
    summary: "List an endpoint's deliveries, newest first",
    tags,
    auth: AUTH.full,
    role: "viewer",
    params: EndpointParams,
    query: DeliveriesQuery,
    responses: { 200: { description: "Deliveries", schema: ListDeliveriesResponse } },
    handler: async ({ params, query, auth }) => ({
      body: await listDeliveries(deps, callerId(auth), params.workspace_id, params.endpoint_id, {
        limit: query.limit ?? 50,
        offset: query.offset ?? 0,
      }),
    }),
  }),
  defineRoute({
    method: "delete",
    path: `${base}/:endpoint_id`,
    summary: "Delete a webhook endpoint: nothing more is sent to it (deleting it again answers the same)",
    tags,
    auth: AUTH.full,
    role: "admin",
    params: EndpointParams,
    responses: { 204: { description: "Deleted" } },
    handler: async ({ params, auth }) => {
      await deleteEndpoint(deps, callerId(auth), params.workspace_id, params.endpoint_id);
      return { status: 204 };
    },
  }),
];
