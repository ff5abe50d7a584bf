import { randomUUID } from "node:crypto";
import { SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHarness, type Harness, randomId, TEST_JWT_SECRET } from "../helpers/harness.js";
import { buildWorld } from "../reliability/support/world.js";
import { person as signedIn } from "./support.js";

/**
 * Teams: a second person joins a workspace (by user id, or by an email invitation accepted at first
 * sign-in), roles decide who reads and who writes, removal takes effect on the next request, and a
 * workspace always keeps one owner. Real HTTP, PostgreSQL and Redis.
 */
let h: Harness;
const auth = (token: string) => ({ Authorization: `Bearer ${token}` });

beforeAll(async () => {
  h = await createHarness();
});
afterAll(() => h.close());

/** A bearer whose verified claims carry an email, as an identity provider's do. */
const tokenWithEmail = (sub: string, email: string) =>
  new SignJWT({ email, email_verified: true })
    .setProtectedHeader({ alg: "HS256" })
    .setSubject(sub)
    .setIssuedAt()
    .setExpirationTime("1h")
    .sign(new TextEncoder().encode(TEST_JWT_SECRET));

const person = () => signedIn(h);

/** An owner with a workspace and an entity in it. */
async function team() {
  const owner = await person();
  const entity = await h.http
    .post("/api/entities")
    .set(auth(owner.token))
    .send({ name: `Acme ${randomId()}` })
    .expect(201);
  return { owner, workspaceId: entity.body.workspace_id as string, entityId: entity.body.id as string };
}

const members = (token: string, workspaceId: string) => h.http.get(`/api/workspaces/${workspaceId}/members`).set(auth(token));
const add = (token: string, workspaceId: string, body: object) =>
  h.http.post(`/api/workspaces/${workspaceId}/members`).set(auth(token)).send(body);
const patch = (token: string, workspaceId: string, memberId: string, role: string) =>
  h.http.patch(`/api/workspaces/${workspaceId}/members/${memberId}`).set(auth(token)).send({ role });
const remove = (token: string, workspaceId: string, memberId: string) =>
  h.http.delete(`/api/workspaces/${workspaceId}/members/${memberId}`).set(auth(token));
const memberIdOf = async (workspaceId: string, userId: string) =>
  (await h.deps.db.workspaceMember.findUniqueOrThrow({ where: { workspaceId_userId: { workspaceId, userId } } })).id;

describe("joining a workspace", () => {
  it("lists the caller's workspaces with the caller's role", async () => {
    const { owner, workspaceId } = await team();
    const res = await h.http.get("/api/workspaces").set(auth(owner.token)).expect(200);
    expect(res.body.workspaces).toEqual([expect.objectContaining({ id: workspaceId, role: "owner" })]);
  });

  it("invites by email; the invitation becomes a membership when that person first signs in", async () => {
    const { owner, workspaceId, entityId } = await team();
    const email = `${randomId("new-")}@example.com`;
    const invited = await add(owner.token, workspaceId, { email: email.toUpperCase(), role: "editor" });
    expect(invited.status).toBe(201);
    expect(invited.body).toMatchObject({ user_id: null, email, role: "editor", status: "invited", added_by: owner.userId });
    expect((await add(owner.token, workspaceId, { email, role: "viewer" })).status).toBe(409);

    // First sign-in with a verified email claim: the member reads the workspace's entity at once.
    const sub = randomId("invitee-");
    const token = await tokenWithEmail(sub, email);
    expect((await h.http.get(`/api/entities/${entityId}`).set(auth(token))).status).toBe(200);
    const user = await h.deps.db.user.findUniqueOrThrow({ where: { sub } });
    const listed = await members(owner.token, workspaceId).expect(200);
    expect(listed.body.members).toEqual([
      expect.objectContaining({ user_id: owner.userId, role: "owner", status: "active" }),
      expect.objectContaining({ user_id: user.id, email, role: "editor", status: "active", added_by: owner.userId }),
    ]);
    const audit = await h.http.get(`/api/workspaces/${workspaceId}/audit`).set(auth(owner.token)).expect(200);
    expect(audit.body.entries.map((e: { action: string }) => e.action)).toEqual(["member.joined", "member.invited"]);
  });

  it("adds a signed-in user by id; a user id that never signed in is a 404, and half a body a 422", async () => {
    const { owner, workspaceId } = await team();
    const colleague = await person();
    const added = await add(owner.token, workspaceId, { user_id: colleague.userId, role: "viewer" });
    expect(added.status).toBe(201);
    expect(added.body).toMatchObject({ user_id: colleague.userId, role: "viewer", status: "active" });
    expect((await add(owner.token, workspaceId, { user_id: colleague.userId, role: "editor" })).status).toBe(409);
    const unknown = await add(owner.token, workspaceId, { user_id: randomUUID(), role: "viewer" });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toMatchObject({ code: "not_found", detail: "User was not found." });
    const both = await add(owner.token, workspaceId, { user_id: colleague.userId, email: "a@example.com", role: "viewer" });
    expect(both.status).toBe(422);
    expect(both.body.detail[0]).toMatchObject({ loc: ["body", "user_id"] });
    expect((await add(owner.token, workspaceId, { email: "x@example.com", role: "boss" })).status).toBe(422);
  });
});

describe("roles", () => {
  it("lets a viewer read and not write, an editor write, and only admins manage members", async () => {
    const { owner, workspaceId, entityId } = await team();
    const viewer = await person();
    const editor = await person();
    const stranger = await person();
    await add(owner.token, workspaceId, { user_id: viewer.userId, role: "viewer" }).expect(201);
    await add(owner.token, workspaceId, { user_id: editor.userId, role: "editor" }).expect(201);

    expect((await members(viewer.token, workspaceId)).status).toBe(200);
    expect((await members(stranger.token, workspaceId)).status).toBe(404);
    const stored = await h.http
      .post("/agent/v1/ingest/content")
      .set(auth(owner.token))
      .send({
        entity_id: entityId,
        sources: [{ id: "r1", platform: "reddit", url: "https://example.com/r1", content: "The pricing page is confusing." }],
      })
      .expect(200);
    const insight = {
      entity_id: entityId,
      request_id: randomUUID(),
      expected_revision: 0,
      title: "Pricing",
      summary: "A buyer finds the pricing page confusing.",
      evidence: [{ content_id: stored.body.content_ids[0], quote: "pricing page is confusing", relation: "supports" }],
    };
    expect((await h.http.post("/agent/v1/knowledge/insights").set(auth(viewer.token)).send(insight)).status).toBe(403);
    expect(
      (
        await h.http
          .post("/agent/v1/knowledge/insights")
          .set(auth(editor.token))
          .send({ ...insight, request_id: randomUUID() })
      ).status,
    ).toBe(201);

    const third = await person();
    expect((await add(editor.token, workspaceId, { user_id: third.userId, role: "viewer" })).status).toBe(403);
    expect((await add(viewer.token, workspaceId, { user_id: third.userId, role: "viewer" })).status).toBe(403);
    expect((await h.http.get(`/api/workspaces/${workspaceId}/audit`).set(auth(editor.token))).status).toBe(403);
    expect((await h.http.get(`/api/workspaces/${workspaceId}/audit`).set(auth(stranger.token))).status).toBe(404);

    // An admin manages members but grants no ownership.
    await patch(owner.token, workspaceId, await memberIdOf(workspaceId, editor.userId), "admin").expect(200);
    expect((await add(editor.token, workspaceId, { user_id: third.userId, role: "viewer" })).status).toBe(201);
    const viewerId = await memberIdOf(workspaceId, viewer.userId);
    expect((await patch(editor.token, workspaceId, viewerId, "owner")).status).toBe(403);
    expect((await patch(editor.token, workspaceId, await memberIdOf(workspaceId, owner.userId), "viewer")).status).toBe(403);
    expect((await patch(editor.token, workspaceId, viewerId, "editor")).body).toMatchObject({ role: "editor" });
  });
});

describe("removal and the last owner", () => {
  it("ends a removed member's access on the next request, for a bearer just used and for their keys", async () => {
    const { owner, workspaceId, entityId } = await team();
    const member = await person();
    await add(owner.token, workspaceId, { user_id: member.userId, role: "editor" }).expect(201);
    const key = await h.http
      .post("/api/user/keys")
      .set(auth(member.token))
      .send({ name: "agent", scopes: ["*"] })
      .expect(201);
    const apiKey = key.body.raw_key as string;
    expect((await h.http.get(`/api/entities/${entityId}`).set(auth(member.token))).status).toBe(200);
    expect((await h.http.get(`/api/entities/${entityId}`).set(auth(apiKey))).status).toBe(200);

    await remove(owner.token, workspaceId, await memberIdOf(workspaceId, member.userId)).expect(204);
    expect((await h.http.get(`/api/entities/${entityId}`).set(auth(member.token))).status).toBe(404);
    expect((await h.http.get(`/api/entities/${entityId}`).set(auth(apiKey))).status).toBe(404);
    expect((await members(member.token, workspaceId)).status).toBe(404);
    const audit = await h.http.get(`/api/workspaces/${workspaceId}/audit`).set(auth(owner.token)).expect(200);
    expect(audit.body.entries[0]).toMatchObject({ action: "member.removed", actor_id: owner.userId, detail: { user_id: member.userId } });
  });

  it("keeps one owner: the last owner can neither leave nor be demoted; a member may leave", async () => {
    const { owner, workspaceId } = await team();
    const ownerId = await memberIdOf(workspaceId, owner.userId);
    expect((await remove(owner.token, workspaceId, ownerId)).status).toBe(409);
    expect((await patch(owner.token, workspaceId, ownerId, "admin")).status).toBe(409);

    const second = await person();
    await add(owner.token, workspaceId, { user_id: second.userId, role: "owner" }).expect(201);
    expect((await patch(owner.token, workspaceId, ownerId, "admin")).body).toMatchObject({ role: "admin" });
    const leaver = await person();
    await add(second.token, workspaceId, { user_id: leaver.userId, role: "viewer" }).expect(201);
    expect((await remove(leaver.token, workspaceId, await memberIdOf(workspaceId, leaver.userId))).status).toBe(204);
  });

  it("lets only one of two owners demoting each other at once succeed", async () => {
    const { owner, workspaceId } = await team();
    const other = await person();
    await add(owner.token, workspaceId, { user_id: other.userId, role: "owner" }).expect(201);
    const [a, b] = await Promise.all([
      patch(owner.token, workspaceId, await memberIdOf(workspaceId, other.userId), "editor"),
      patch(other.token, workspaceId, await memberIdOf(workspaceId, owner.userId), "editor"),
    ]);
    expect([a.status, b.status].sort()).toEqual([200, 403]);
    expect(await h.deps.db.workspaceMember.count({ where: { workspaceId, role: "owner" } })).toBe(1);
  });
});

describe("a viewer reads but does not write", () => {
  it("refuses a viewer's ingest, analysis, skill change and skill run with 403, and lets an editor do them", async () => {
    const { owner, workspaceId, entityId } = await team();
    const viewer = await person();
    await add(owner.token, workspaceId, { user_id: viewer.userId, role: "viewer" }).expect(201);
    const source = { id: "v1", platform: "reddit", url: "https://example.com/v1", content: "Sync is slow." };
    const ingest = await h.http
      .post("/agent/v1/ingest/content")
      .set(auth(viewer.token))
      .send({ entity_id: entityId, sources: [source] });
    expect(ingest.status).toBe(403);
    expect(ingest.body).toMatchObject({ code: "forbidden" });
    const analysis = await h.http
      .post("/agent/v1/analysis/run")
      .set(auth(viewer.token))
      .send({ question: "What do people say?", entity_id: entityId });
    expect(analysis.status).toBe(403);
    const skills = await h.http.get(`/api/entities/${entityId}/skills`).set(auth(viewer.token)).expect(200);
    const put = await h.http
      .put(`/api/entities/${entityId}/skills`)
      .set(auth(viewer.token))
      .send({ expected_skills: skills.body.skills, skills: [{ id: "s1", title: "S" }] });
    expect(put.status).toBe(403);
    await h.http
      .put(`/api/entities/${entityId}/skills`)
      .set(auth(owner.token))
      .send({ expected_skills: [], skills: [{ id: "s1", title: "S" }] })
      .expect(200);
    const run = await h.http
      .post(`/api/entities/${entityId}/skills/s1/runs`)
      .set(auth(viewer.token))
      .set("Idempotency-Key", randomId("run-"))
      .send({});
    expect(run.status).toBe(403);
    // Nothing was stored for the viewer.
    expect(await h.deps.db.content.count({ where: { entityId } })).toBe(0);
    expect(await h.deps.db.skill.count({ where: { entityId } })).toBe(1);
  });
});

describe("the audit log", () => {
  it("records keys, webhook endpoints and routines beside membership, for admins only", async () => {
    const world = await buildWorld(h);
    const editor = await person();
    await add(world.token, world.workspaceId, { user_id: editor.userId, role: "editor" }).expect(201);
    const refused = await h.http.get(`/api/workspaces/${world.workspaceId}/audit`).set(auth(editor.token));
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe("forbidden");

    const res = await h.http.get(`/api/workspaces/${world.workspaceId}/audit?limit=500`).set(auth(world.token)).expect(200);
    const entries = res.body.entries as { action: string; actor_id: string; target: string; detail: Record<string, unknown> }[];
    const of = (action: string) => entries.filter((e) => e.action === action);
    // The world made four keys and revoked one, registered an endpoint and saved a paused routine.
    expect(
      of("key.created")
        .map((e) => e.target)
        .sort(),
    ).toEqual(
      Object.values(world.keys)
        .map((k) => k.id)
        .sort(),
    );
    expect(of("key.revoked")).toEqual([expect.objectContaining({ actor_id: world.userId, target: world.keys.revoked.id })]);
    expect(of("webhook.created")).toEqual([
      expect.objectContaining({
        target: world.ids.endpoint_id?.[0],
        detail: expect.objectContaining({ url: "https://hooks.webhooks.invalid/research" }),
      }),
    ]);
    expect(of("routine.created")).toEqual([
      expect.objectContaining({ actor_id: world.userId, detail: expect.objectContaining({ skill_id: world.skillId, enabled: false }) }),
    ]);
    expect(of("member.added")).toEqual([expect.objectContaining({ detail: { user_id: editor.userId, role: "editor" } })]);
    // No raw key is ever written to the log.
    for (const key of Object.values(world.keys)) expect(JSON.stringify(entries)).not.toContain(key.raw);

    await h.http.delete(`/api/workspaces/${world.workspaceId}/webhooks/${world.ids.endpoint_id?.[0]}`).set(auth(world.token)).expect(204);
    const after = await h.http.get(`/api/workspaces/${world.workspaceId}/audit`).set(auth(world.token)).expect(200);
    expect(after.body.entries[0]).toMatchObject({ action: "webhook.deleted", actor_id: world.userId, target: world.ids.endpoint_id?.[0] });
  });
});

/** A bearer whose claims carry an email and the given `email_verified` claim (left out when undefined). */
const tokenWithClaims = (sub: string, email: string, emailVerified: unknown) =>
  new SignJWT({ email, ...(emailVerified === undefined ? {} : { email_verified: emailVerified }) })
    .setProtectedHeader({ alg: "HS256" })
    .setSubject(sub)
    .setIssuedAt()
    .setExpirationTime("1h")
    .sign(new TextEncoder().encode(TEST_JWT_SECRET));

describe("invitations and email matching", () => {
  it("takes an invitation only with email_verified true or absent, never with a string", async () => {
    const { owner, workspaceId, entityId } = await team();
    for (const claim of ["false", "true", 0, null]) {
      const email = `${randomId("claim-")}@example.com`;
      await add(owner.token, workspaceId, { email, role: "editor" }).expect(201);
      const sub = randomId("unverified-");
      const token = await tokenWithClaims(sub, email, claim);
      expect((await h.http.get(`/api/entities/${entityId}`).set(auth(token))).status, `email_verified: ${JSON.stringify(claim)}`).toBe(404);
      const listed = await members(owner.token, workspaceId).expect(200);
      expect(listed.body.members.find((m: { email: string }) => m.email === email)).toMatchObject({ status: "invited", user_id: null });
      expect((await h.deps.db.user.findUniqueOrThrow({ where: { sub } })).email).toBeNull();
    }
    // The documented absent case counts as verified.
    const email = `${randomId("absent-")}@example.com`;
    await add(owner.token, workspaceId, { email, role: "viewer" }).expect(201);
    const token = await tokenWithClaims(randomId("absent-"), email, undefined);
    expect((await h.http.get(`/api/entities/${entityId}`).set(auth(token))).status).toBe(200);
  });

  it("adds by email the account that verified it, never one that only claimed it, and refuses an ambiguous email", async () => {
    const { owner, workspaceId } = await team();
    const email = `${randomId("shared-")}@example.com`;
    // The oldest account only claims the email; a later one verified it.
    const claimer = randomId("claimer-");
    await h.http
      .get("/agent/v1/connection")
      .set(auth(await tokenWithClaims(claimer, email, "false")))
      .expect(200);
    const verifier = randomId("verifier-");
    await h.http
      .get("/agent/v1/connection")
      .set(auth(await tokenWithClaims(verifier, email, true)))
      .expect(200);
    const added = await add(owner.token, workspaceId, { email, role: "viewer" });
    expect(added.status, JSON.stringify(added.body)).toBe(201);
    const verified = await h.deps.db.user.findUniqueOrThrow({ where: { sub: verifier } });
    expect(added.body).toMatchObject({ user_id: verified.id, status: "active" });

    // Two accounts that both verified one email: which person is meant is not known, so nothing is added.
    const other = await team();
    const twice = `${randomId("twice-")}@example.com`;
    for (const sub of [randomId("first-"), randomId("second-")]) {
      await h.http
        .get("/agent/v1/connection")
        .set(auth(await tokenWithClaims(sub, twice, true)))
        .expect(200);
    }
    const ambiguous = await add(other.owner.token, other.workspaceId, { email: twice, role: "viewer" });
    expect(ambiguous.status).toBe(409);
    expect(ambiguous.body).toMatchObject({ code: "conflict", detail: expect.stringMatching(/user_id/) });
    expect((await members(other.owner.token, other.workspaceId).expect(200)).body.count).toBe(1);
  });

  it("lets only an owner withdraw an owner's invitation, as only an owner changes it", async () => {
    const { owner, workspaceId } = await team();
    const admin = await person();
    await add(owner.token, workspaceId, { user_id: admin.userId, role: "admin" }).expect(201);
    const invited = await add(owner.token, workspaceId, { email: `${randomId("owner-")}@example.com`, role: "owner" }).expect(201);
    expect((await patch(admin.token, workspaceId, invited.body.id, "viewer")).status).toBe(403);
    const withdrawn = await remove(admin.token, workspaceId, invited.body.id);
    expect(withdrawn.status).toBe(403);
    expect(withdrawn.body).toMatchObject({ code: "forbidden" });
    expect(await h.deps.db.workspaceInvitation.count({ where: { id: invited.body.id } })).toBe(1);
    // An admin withdraws other invitations; the owner withdraws this one.
    const editorInvite = await add(admin.token, workspaceId, { email: `${randomId("ed-")}@example.com`, role: "editor" }).expect(201);
    await remove(admin.token, workspaceId, editorInvite.body.id).expect(204);
    await remove(owner.token, workspaceId, invited.body.id).expect(204);
  });
});
