import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHarness, type Harness, randomId } from "../helpers/harness.js";

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(() => h.close());

async function userWithEntities(count: number) {
  const sub = randomId("conn-");
  const token = await h.token(sub);
  await h.http.get("/api/user/keys").set("Authorization", `Bearer ${token}`);
  const user = await h.deps.db.user.findUniqueOrThrow({ where: { sub } });
  const ws = await h.deps.db.workspace.create({ data: { name: "w", members: { create: { userId: user.id, role: "owner" } } } });
  const project = await h.deps.db.project.create({ data: { workspaceId: ws.id, name: "p" } });
  const entities = [];
  for (let i = 0; i < count; i++) {
    entities.push(await h.deps.db.entity.create({ data: { workspaceId: ws.id, projectId: project.id, name: `e${i}` } }));
  }
  return { token, user, ws, project, entities };
}

describe("GET /agent/v1/connection", () => {
  it("asks for a scope when several entities are visible, as a 200 connection answer", async () => {
    const { token, user } = await userWithEntities(2);
    const res = await h.http.get("/agent/v1/connection").set("Authorization", `Bearer ${token}`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      contract_version: 1,
      status: "scope_required",
      user_id: user.id,
      accepts: ["entity_id", "project_id"],
    });
  });

  it("connects to a named entity or project", async () => {
    const { token, ws, project, entities } = await userWithEntities(2);
    const byEntity = await h.http.get(`/agent/v1/connection?entity_id=${entities[1]!.id}`).set("Authorization", `Bearer ${token}`);
    expect(byEntity.body).toMatchObject({ status: "connected", entity_id: entities[1]!.id, workspace_id: ws.id, scopes: ["*"] });
    const byProject = await h.http.get(`/agent/v1/connection?project_id=${project.id}`).set("Authorization", `Bearer ${token}`);
    expect(byProject.body).toMatchObject({ status: "connected", project_id: project.id, workspace_id: ws.id });
  });

  it("connects directly when only one entity is visible, and reports a key's scopes", async () => {
    const { token, entities } = await userWithEntities(1);
    const key = await h.http
      .post("/api/user/keys")
      .set("Authorization", `Bearer ${token}`)
      .send({ name: "k", scopes: ["export"] });
    const res = await h.http.get("/agent/v1/connection").set("Authorization", `Bearer ${key.body.raw_key}`);
    expect(res.body).toMatchObject({ status: "connected", entity_id: entities[0]!.id, credential: "key", scopes: ["export"] });
  });

  it("hides entities of other users behind 404", async () => {
    const { entities } = await userWithEntities(1);
    const other = await h.token();
    const res = await h.http.get(`/agent/v1/connection?entity_id=${entities[0]!.id}`).set("Authorization", `Bearer ${other}`);
    expect(res.status).toBe(404);
    expect(res.body.code).toBe("not_found");
  });
});
