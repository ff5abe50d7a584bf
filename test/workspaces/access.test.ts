import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { activeMembershipsOf, activeWorkspaceOf, memberRole } from "../../src/access/workspaces/access.js";
import type { Role } from "../../src/platform/roles.js";
import { createHarness, type Harness, randomId } from "../helpers/harness.js";

/**
 * "A workspace the user can act in" (src/access/workspaces/access.ts), which every service resolving what a
 * user may see uses: in SQL (`activeMembershipsOf`, optionally from a least role up) and as a Prisma
 * `where` (`activeWorkspaceOf`). Both say the same: the user is a member and the workspace is not
 * being deleted. Real PostgreSQL.
 */
let h: Harness;

beforeAll(async () => {
  h = await createHarness();
});
afterAll(() => h.close());

const user = async () => (await h.deps.db.user.create({ data: { sub: randomId("access-") } })).id;

async function workspace(members: Record<string, Role>, state: "active" | "deleting" = "active"): Promise<string> {
  const ws = await h.deps.db.workspace.create({
    data: { name: randomId("ws-"), state, purgeAfter: state === "deleting" ? new Date(Date.now() + 3_600_000) : null },
  });
  await h.deps.db.workspaceMember.createMany({
    data: Object.entries(members).map(([userId, role]) => ({ workspaceId: ws.id, userId, role })),
  });
  return ws.id;
}

async function viaSql(userId: string, least?: Role): Promise<Record<string, string>> {
  const rows = await h.deps.db.$queryRaw<{ workspace_id: string; role: string }[]>`
    SELECT m.workspace_id, m.role FROM ${activeMembershipsOf(userId, least)} m`;
  return Object.fromEntries(rows.map((r) => [r.workspace_id, r.role]));
}

async function viaWhere(userId: string): Promise<string[]> {
  const rows = await h.deps.db.workspace.findMany({ where: activeWorkspaceOf(userId), select: { id: true } });
  return rows.map((r) => r.id).sort();
}

describe("a workspace the user can act in", () => {
  it("is one the user is a member of, with their role, and not one being deleted; SQL and Prisma agree", async () => {
    const [alice, bob] = [await user(), await user()];
    const owned = await workspace({ [alice]: "owner", [bob]: "viewer" });
    const viewed = await workspace({ [alice]: "viewer" });
    const deleting = await workspace({ [alice]: "owner", [bob]: "editor" }, "deleting");
    await workspace({ [bob]: "admin" });

    expect(await viaSql(alice)).toEqual({ [owned]: "owner", [viewed]: "viewer" });
    expect(await viaWhere(alice)).toEqual([owned, viewed].sort());
    expect(await memberRole(h.deps.db, alice, deleting)).toBeNull();
    expect(Object.keys(await viaSql(bob))).not.toContain(deleting);
    expect(Object.keys(await viaSql(bob)).sort()).toEqual(await viaWhere(bob));

    // Restored, it is seen again at once.
    await h.deps.db.workspace.update({ where: { id: deleting }, data: { state: "active", purgeAfter: null } });
    expect(await viaSql(alice)).toEqual({ [owned]: "owner", [viewed]: "viewer", [deleting]: "owner" });
    expect(await viaWhere(alice)).toEqual([owned, viewed, deleting].sort());
  });

  it("from a least role up counts that role and every stronger one", async () => {
    const u = await user();
    const ids = {
      viewer: await workspace({ [u]: "viewer" }),
      editor: await workspace({ [u]: "editor" }),
      admin: await workspace({ [u]: "admin" }),
      owner: await workspace({ [u]: "owner" }),
    };
    await workspace({ [u]: "owner" }, "deleting");

    const from = async (least: Role) => Object.values(await viaSql(u, least)).sort();
    expect(await from("viewer")).toEqual(["admin", "editor", "owner", "viewer"]);
    expect(await from("editor")).toEqual(["admin", "editor", "owner"]);
    expect(await from("admin")).toEqual(["admin", "owner"]);
    expect(await from("owner")).toEqual(["owner"]);
    expect(Object.keys(await viaSql(u, "editor")).sort()).toEqual([ids.editor, ids.admin, ids.owner].sort());
  });
});
