import { expect } from "vitest";
import { personalWorkspace } from "../../src/access/workspaces/access.js";
import { type Harness, randomId } from "../helpers/harness.js";

/** A signed-in user of the harness: bearer header, user id, and shortcuts to both routes. */
export interface TestUser {
  sub: string;
  auth: string;
  id: string;
  save: (body: Record<string, unknown>) => ReturnType<Harness["http"]["post"]>;
  recall: (query: Record<string, string | number>) => ReturnType<Harness["http"]["get"]>;
}

export async function signIn(h: Harness): Promise<TestUser> {
  const sub = randomId("ctx-user-");
  const auth = `Bearer ${await h.token(sub)}`;
  // The user row is created on first sight of the bearer.
  const first = await h.http.get("/api/user/keys").set("Authorization", auth);
  expect(first.status).toBe(200);
  const user = await h.deps.db.user.findUniqueOrThrow({ where: { sub } });
  return {
    sub,
    auth,
    id: user.id,
    save: (body) => h.http.post("/agent/v1/context/save").set("Authorization", auth).send(body),
    recall: (query) => h.http.get("/agent/v1/context/recall").set("Authorization", auth).query(query),
  };
}

/** A project in the user's personal workspace. */
export async function projectOf(h: Harness, user: TestUser, name = "Project"): Promise<string> {
  const workspaceId = await personalWorkspace(h.deps.db, user.id);
  const project = await h.deps.db.project.create({ data: { workspaceId, name } });
  return project.id;
}
