import type { Request } from "express";
import { AUTH, callerId } from "../../platform/auth.js";
import type { AppDeps } from "../../platform/deps.js";
import { defineRoute } from "../../platform/http/route.js";
import { createShareLink, listShareLinks, revokeShareLink } from "./links.js";
import { CreatedShareLink, CreateShareLinkBody, ListShareLinksQuery, ShareLinkList, ShareLinkParams } from "./schemas.js";

const tags = ["share links"];

/** The address the link is handed out under: the advertised one, else the one the request came to. */
const baseUrlOf = (deps: AppDeps, req: Request) => deps.config.PUBLIC_BASE_URL ?? `${req.protocol}://${req.get("host") ?? "localhost"}`;

export const shareLinkRoutes = (deps: AppDeps) => [
  defineRoute({
    method: "post",
    path: "/api/share-links",
    summary: "Create a link that opens a read-only page of an analysis, a knowledge record or an entity",
    description:
      "Anyone with the URL opens the page, without signing in, until it expires (`expires_in`, default 7 days, at most " +
      "90) or is revoked. The URL is shown only in this answer. It opens that one page (and, for a running analysis, " +
      "its progress); it is never a credential for an API route. The link belongs to the resource's workspace.",
    tags,
    auth: AUTH.full,
    role: "editor",
    body: CreateShareLinkBody,
    responses: { 201: { description: "Created; `url` is not shown again", schema: CreatedShareLink } },
    handler: async ({ body, auth, req }) => ({
      status: 201,
      body: await createShareLink(deps.db, callerId(auth), body, baseUrlOf(deps, req)),
    }),
  }),
  defineRoute({
    method: "get",
    path: "/api/share-links",
    summary: "List a workspace's share links, newest first (without their URLs)",
    tags,
    auth: AUTH.full,
    role: "viewer",
    query: ListShareLinksQuery,
    responses: { 200: { description: "Links, with their state (active, expired, revoked)", schema: ShareLinkList } },
    handler: async ({ query, auth }) => ({ body: await listShareLinks(deps.db, callerId(auth), query) }),
  }),
  defineRoute({
    method: "delete",
    path: "/api/share-links/:share_link_id",
    summary: "Revoke a share link: its page answers 404 from now on (revoking it again answers the same)",
    tags,
    auth: AUTH.full,
    role: "editor",
    params: ShareLinkParams,
    responses: { 204: { description: "Revoked" } },
    handler: async ({ params, auth }) => {
      await revokeShareLink(deps.db, callerId(auth), params.share_link_id);
      return { status: 204 };
    },
  }),
];
