import { AUTH, callerId } from "../../platform/auth.js";
import type { AppDeps } from "../../platform/deps.js";
import { defineRoute } from "../../platform/http/route.js";
import { readAudit } from "./audit.js";
import { addMember, changeRole, listMembers, listWorkspaces, removeMember } from "./members.js";
import {
  AddMemberBody,
  AuditList,
  AuditQuery,
  ChangeRoleBody,
  MemberList,
  MemberParams,
  MemberRecord,
  WorkspaceList,
  WorkspaceParams,
} from "./schemas.js";

const tags = ["workspaces"];
const notMember = { description: "Not a member of the workspace, or no such workspace or member" };
const forbidden = {
  description: "The caller's role may not do this (forbidden): admins manage members, only owners grant or take an owner's role",
};

export const workspaceRoutes = (deps: AppDeps) => [
  defineRoute({
    method: "get",
    path: "/api/workspaces",
    summary: "The caller's workspaces, each with the caller's role",
    tags,
    auth: AUTH.full,
    role: "account",
    responses: { 200: { description: "Workspaces, oldest first", schema: WorkspaceList } },
    handler: async ({ auth }) => ({ body: await listWorkspaces(deps.db, callerId(auth)) }),
  }),
  defineRoute({
    method: "get",
    path: "/api/workspaces/:workspace_id/members",
    summary: "A workspace's members and open invitations (every member reads them)",
    tags,
    auth: AUTH.full,
    role: "viewer",
    params: WorkspaceParams,
    responses: { 200: { description: "Members, oldest first, then invitations", schema: MemberList }, 404: notMember },
    handler: async ({ params, auth }) => ({ body: await listMembers(deps.db, callerId(auth), params.workspace_id) }),
  }),
  defineRoute({
    method: "post",
    path: "/api/workspaces/:workspace_id/members",
    summary: "Add a member by user id (someone who has signed in), or invite one by email (admins)",
    tags,
    auth: AUTH.full,
    role: "admin",
    params: WorkspaceParams,
    body: AddMemberBody,
    responses: {
      201: { description: "The member (status active) or the invitation (status invited)", schema: MemberRecord },
      403: forbidden,
      404: { description: "Not a member of the workspace, or a user id that never signed in" },
      409: { description: "Already a member, the email is already invited, or several accounts verified the email (conflict)" },
    },
    handler: async ({ params, body, auth }) => ({ status: 201, body: await addMember(deps.db, callerId(auth), params.workspace_id, body) }),
  }),
  defineRoute({
    method: "patch",
    path: "/api/workspaces/:workspace_id/members/:member_id",
    summary: "Change a member's role (admins; an owner's role only by an owner; the last owner stays one)",
    tags,
    auth: AUTH.full,
    role: "admin",
    params: MemberParams,
    body: ChangeRoleBody,
    responses: {
      200: { description: "The member as changed", schema: MemberRecord },
      403: forbidden,
      404: notMember,
      409: { description: "The last owner would be demoted (conflict)" },
    },
    handler: async ({ params, body, auth }) => ({
      body: await changeRole(deps.db, callerId(auth), params.workspace_id, params.member_id, body.role),
    }),
  }),
  defineRoute({
    method: "delete",
    path: "/api/workspaces/:workspace_id/members/:member_id",
    summary: "Remove a member or withdraw an invitation (admins; any member may leave; the last owner stays)",
    tags,
    auth: AUTH.full,
    role: "admin",
    params: MemberParams,
    responses: {
      204: { description: "Removed; their access ends at once" },
      403: forbidden,
      404: notMember,
      409: { description: "The last owner would leave (conflict)" },
    },
    handler: async ({ params, auth }) => {
      await removeMember(deps.db, callerId(auth), params.workspace_id, params.member_id);
      return { status: 204 };
    },
  }),
  defineRoute({
    method: "get",
    path: "/api/workspaces/:workspace_id/audit",
    summary: "Membership and role changes of a workspace, newest first (admins)",
    tags,
    auth: AUTH.full,
    role: "admin",
    params: WorkspaceParams,
    query: AuditQuery,
    responses: { 200: { description: "Audit entries", schema: AuditList }, 403: forbidden, 404: notMember },
    handler: async ({ params, query, auth }) => ({
      body: await readAudit(deps.db, callerId(auth), params.workspace_id, query.limit ?? 100),
    }),
  }),
];
