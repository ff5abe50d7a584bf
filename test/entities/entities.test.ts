import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearer, createEntityFor, createKeyFor } from "../helpers/evidence.js";
import { createHarness, type Harness } from "../helpers/harness.js";

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(() => h.close());

async function userId(sub: string): Promise<string> {
  return (await h.deps.db.user.findUniqueOrThrow({ where: { sub } })).id;
}

describe("entity records", () => {
  it("creates an entity in a personal workspace for a caller without one, with the documented record", async () => {
    const sub = `entity-user-${Date.now()}`;
    const token = await h.token(sub);
    const res = await h.http
      .post("/api/entities")
      .set(bearer(token))
      .send({
        name: " Acme ",
        url: "https://acme.test",
        keywords: ["acme", "widgets"],
        platforms: ["reddit", "hackernews", "reddit"],
        collection_targets: { reddit: ["r/acme"] },
        unknown: "ignored",
      });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.any(String),
      workspace_id: expect.any(String),
      project_id: null,
      parent_entity_id: null,
      kind: "company",
      name: "Acme",
      url: "https://acme.test",
      keywords: ["acme", "widgets"],
      collection_targets: { reddit: ["r/acme"] },
      platforms: ["reddit", "hackernews"],
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    const ws = await h.deps.db.workspace.findUniqueOrThrow({ where: { id: res.body.workspace_id } });
    expect(ws.personal).toBe(true);

    // The caller's only workspace is used again when none is named.
    const second = await createEntityFor(h, token, { name: "Acme Widget", kind: "product", parent_entity_id: res.body.id });
    expect(second.workspace_id).toBe(res.body.workspace_id);
    expect(await h.deps.db.workspaceMember.count({ where: { userId: await userId(sub) } })).toBe(1);

    const read = await h.http.get(`/api/entities/${res.body.id}`).set(bearer(token));
    expect(read.status).toBe(200);
    expect(read.body).toEqual(res.body);
  });

  it("creates in a named workspace only when the caller is a member, and in a project's workspace", async () => {
    const sub = `member-${Date.now()}`;
    const token = await h.token(sub);
    await createEntityFor(h, token); // makes the user and a personal workspace
    const team = await h.deps.db.workspace.create({ data: { name: "Team" } });
    await h.deps.db.workspaceMember.create({ data: { workspaceId: team.id, userId: await userId(sub) } });
    const project = await h.deps.db.project.create({ data: { workspaceId: team.id, name: "Launch" } });
    const foreign = await h.deps.db.workspace.create({ data: { name: "Not mine" } });

    const inTeam = await createEntityFor(h, token, { workspace_id: team.id });
    expect(inTeam.workspace_id).toBe(team.id);
    const inProject = await createEntityFor(h, token, { project_id: project.id });
    expect(inProject).toMatchObject({ workspace_id: team.id, project_id: project.id });

    const refused = await h.http.post("/api/entities").set(bearer(token)).send({ name: "X", workspace_id: foreign.id });
    expect(refused.status).toBe(404);
    expect(refused.body.code).toBe("not_found");
    // A project of another workspace than the one named is refused.
    const personal = (await h.http.get("/api/entities").set(bearer(token))).body[0].workspace_id as string;
    const mismatch = await h.http
      .post("/api/entities")
      .set(bearer(token))
      .send({ name: "X", workspace_id: personal, project_id: project.id });
    expect(mismatch.status).toBe(422);
    expect(mismatch.body.detail[0].loc).toEqual(["body", "project_id"]);
  });

  it("lists only what the caller can see, and answers 404 for anything else", async () => {
    const alice = await h.token();
    const bob = await h.token();
    const a = await createEntityFor(h, alice, { name: "Alice Co" });
    const b = await createEntityFor(h, bob, { name: "Bob Co" });

    const list = await h.http.get("/api/entities").set(bearer(alice));
    expect(list.status).toBe(200);
    expect(list.body.map((e: { id: string }) => e.id)).toEqual([a.id]);
    expect((await h.http.get(`/api/entities?workspace_id=${b.workspace_id}`).set(bearer(alice))).body).toEqual([]);
    expect((await h.http.get("/api/entities?workspace_id=nope").set(bearer(alice))).status).toBe(422);

    expect((await h.http.get(`/api/entities/${b.id}`).set(bearer(alice))).status).toBe(404);
    expect((await h.http.get("/api/entities/not-a-uuid").set(bearer(alice))).status).toBe(404);
    expect((await h.http.patch(`/api/entities/${b.id}`).set(bearer(alice)).send({ name: "Mine now" })).status).toBe(404);
    const parentElsewhere = await h.http.post("/api/entities").set(bearer(alice)).send({ name: "Child", parent_entity_id: b.id });
    expect(parentElsewhere.status).toBe(404);
  });

  it("changes the fields sent, leaves absent and null ones, and refuses moves and cycles", async () => {
    const token = await h.token();
    const parent = await createEntityFor(h, token, { name: "Parent", keywords: ["a"] });
    const child = await createEntityFor(h, token, { name: "Child", parent_entity_id: parent.id });

    const patched = await h.http
      .patch(`/api/entities/${parent.id}`)
      .set(bearer(token))
      .send({ name: "Renamed", kind: "competitor", platforms: ["github"], url: null, keywords: null });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ name: "Renamed", kind: "competitor", platforms: ["github"], url: "", keywords: ["a"] });
    expect(Date.parse(patched.body.updated_at)).toBeGreaterThanOrEqual(Date.parse(patched.body.created_at));

    const other = await h.deps.db.workspace.create({ data: { name: "Elsewhere" } });
    const move = await h.http.patch(`/api/entities/${parent.id}`).set(bearer(token)).send({ workspace_id: other.id });
    expect(move.status).toBe(422);
    expect(move.body.detail[0].loc).toEqual(["body", "workspace_id"]);

    const cycle = await h.http.patch(`/api/entities/${parent.id}`).set(bearer(token)).send({ parent_entity_id: child.id });
    expect(cycle.status).toBe(422);
    expect(cycle.body.detail[0].loc).toEqual(["body", "parent_entity_id"]);
    const self = await h.http.patch(`/api/entities/${parent.id}`).set(bearer(token)).send({ parent_entity_id: parent.id });
    expect(self.status).toBe(422);
  });

  it("validates the body with the spec's 422 shape", async () => {
    const token = await h.token();
    const res = await h.http
      .post("/api/entities")
      .set(bearer(token))
      .send({ kind: "person", platforms: ["myspace"], keywords: "acme" });
    expect(res.status).toBe(422);
    const locs = res.body.detail.map((d: { loc: unknown[] }) => d.loc);
    expect(locs).toEqual(
      expect.arrayContaining([
        ["body", "name"],
        ["body", "kind"],
        ["body", "platforms", 0],
        ["body", "keywords"],
      ]),
    );
  });

  it("accepts a bearer or a key with *, and refuses ingest-only keys and missing credentials", async () => {
    const token = await h.token();
    const full = await createKeyFor(h, token, ["*"]);
    const ingestOnly = await createKeyFor(h, token, ["ingest"]);
    expect((await h.http.post("/api/entities").set(bearer(full.raw_key)).send({ name: "By key" })).status).toBe(201);
    expect((await h.http.get("/api/entities").set(bearer(full.raw_key))).body).toHaveLength(1);
    const refused = await h.http.get("/api/entities").set(bearer(ingestOnly.raw_key));
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe("insufficient_scope");
    expect((await h.http.get("/api/entities")).status).toBe(401);
  });
});
