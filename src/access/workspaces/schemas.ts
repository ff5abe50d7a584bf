import { z } from "zod";
import { ROLES } from "../../platform/roles.js";
import { optional, pathId, queryInt } from "../../platform/validation.js";

export const WorkspaceParams = z.object({ workspace_id: pathId("Workspace") });
export const MemberParams = z.object({ workspace_id: pathId("Workspace"), member_id: pathId("Member") });

const Email = z.string().trim().toLowerCase().max(320).pipe(z.email());

/** Add a member by the user id of someone who has signed in, or invite one by email. */
export const AddMemberBody = z
  .object({ user_id: z.uuid().optional(), email: Email.optional(), role: z.enum(ROLES) })
  .superRefine((body, ctx) => {
    if ((body.user_id === undefined) === (body.email === undefined)) {
      ctx.addIssue({ code: "custom", path: ["user_id"], message: "Give exactly one of user_id or email", params: { type: "value_error" } });
    }
  });
export type AddMemberInput = z.output<typeof AddMemberBody>;

export const ChangeRoleBody = z.object({ role: z.enum(ROLES) });

export const MemberRecord = z.object({
  id: z.uuid(),
  user_id: z.uuid().nullable(),
  email: z.string().nullable(),
  role: z.enum(ROLES),
  status: z.enum(["active", "invited"]),
  added_by: z.uuid().nullable(),
  created_at: z.string(),
});
export type MemberRecord = z.infer<typeof MemberRecord>;

export const MemberList = z.object({ workspace_id: z.uuid(), members: z.array(MemberRecord), count: z.number().int() });

export const WorkspaceRecord = z.object({
  id: z.uuid(),
  name: z.string(),
  personal: z.boolean(),
  role: z.enum(ROLES),
  created_at: z.string(),
  state: z.enum(["active", "deleting"]).describe("deleting: listed for its owners only, who may restore it until purge_after"),
  retention_days: z.number().int().nullable(),
  purge_after: z.string().nullable(),
});
export const WorkspaceList = z.object({ workspaces: z.array(WorkspaceRecord), count: z.number().int() });

export const AuditQuery = z.object({ limit: optional(queryInt(1, 500)) });
export const AuditList = z.object({
  workspace_id: z.uuid(),
  entries: z.array(
    z.object({
      id: z.string(),
      actor_id: z.uuid().nullable(),
      action: z.string(),
      target: z.string().nullable(),
      detail: z.record(z.string(), z.unknown()),
      created_at: z.string(),
    }),
  ),
  count: z.number().int(),
});
