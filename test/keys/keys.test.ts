import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHarness, type Harness } from "../helpers/harness.js";

let h: Harness;
let alice: string;
beforeAll(async () => {
  h = await createHarness();
  alice = await h.token("alice");
});
afterAll(() => h.close());

const createKey = (token: string, body: unknown) =>
  h.http
    .post("/api/user/keys")
    .set("Authorization", `Bearer ${token}`)
    .send(body as object);

describe("POST /api/user/keys", () => {
  it("creates a key with the default ingest scope and returns the raw key once", async () => {
    const res = await createKey(alice, { name: "laptop" });
    expect(res.status).toBe(201);
    expect(res.body.raw_key).toMatch(/^svc_live_[0-9A-Za-z]{40}$/);
    expect(res.body.key).toMatchObject({ name: "laptop", scopes: ["ingest"], is_active: true });
    expect(res.body.key.key_prefix).toBe(res.body.raw_key.slice(0, 12));
    expect(res.body.key.key_prefix).toMatch(/^svc_live_/);
    expect(res.body.key).not.toHaveProperty("key_hash");

    const list = await h.http.get("/api/user/keys").set("Authorization", `Bearer ${alice}`);
    expect(list.status).toBe(200);
    const listed = list.body.keys.find((k: { id: string }) => k.id === res.body.key.id);
    expect(listed).toMatchObject({ name: "laptop", is_active: true });
    expect(JSON.stringify(list.body)).not.toContain(res.body.raw_key);
    expect(JSON.stringify(list.body)).not.toContain("key_hash");
  });

  it("stores only a hash of the raw key", async () => {
    const res = await createKey(alice, { name: "hashed", scopes: ["export"] });
    const row = await h.deps.db.apiKey.findUniqueOrThrow({ where: { id: res.body.key.id } });
    expect(row.keyHash).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(row)).not.toContain(res.body.raw_key);
  });

  it("accepts explicit scopes and null as the default", async () => {
    const all = await createKey(alice, { name: "all", scopes: ["ingest", "export", "*"] });
    expect(all.status).toBe(201);
    expect(all.body.key.scopes).toEqual(["ingest", "export", "*"]);
    const nulled = await createKey(alice, { name: "nulled", scopes: null });
    expect(nulled.body.key.scopes).toEqual(["ingest"]);
  });

  it("refuses an explicit empty scope list with the 422 shape", async () => {
    const res = await createKey(alice, { name: "empty", scopes: [] });
    expect(res.status).toBe(422);
    expect(res.body.detail[0]).toMatchObject({ loc: ["body", "scopes"], type: "too_short" });
  });

  it("refuses unknown scopes, a missing name and an over-long name", async () => {
    const bad = await createKey(alice, { name: "x", scopes: ["admin"] });
    expect(bad.status).toBe(422);
    expect(bad.body.detail[0]).toMatchObject({ loc: ["body", "scopes", 0], type: "enum" });
    const missing = await createKey(alice, {});
    expect(missing.status).toBe(422);
    expect(missing.body.detail[0]).toMatchObject({ loc: ["body", "name"], type: "missing", msg: "Field required" });
    const long = await createKey(alice, { name: "n".repeat(201) });
    expect(long.status).toBe(422);
    expect(long.body.detail[0]).toMatchObject({ loc: ["body", "name"], type: "string_too_long" });
    const edge = await createKey(alice, { name: "n".repeat(200) });
    expect(edge.status).toBe(201);
  });
});

describe("key management accepts only the user session bearer", () => {
  it("refuses a valid API key with 401 on all four operations and records the attempt", async () => {
    const created = await createKey(alice, { name: "all-scopes", scopes: ["*"] });
    const raw = created.body.raw_key as string;
    const keyId = created.body.key.id as string;
    const calls = [
      h.http.post("/api/user/keys").set("Authorization", `Bearer ${raw}`).send({ name: "nested" }),
      h.http.get("/api/user/keys").set("Authorization", `Bearer ${raw}`),
      h.http.delete(`/api/user/keys/${keyId}`).set("Authorization", `Bearer ${raw}`),
      h.http.get(`/api/user/keys/${keyId}/usage`).set("X-API-Key", raw),
    ];
    for (const res of await Promise.all(calls)) {
      expect(res.status).toBe(401);
      expect(res.body).toMatchObject({ code: "bearer_required" });
      expect(res.headers["www-authenticate"]).toMatch(/^Bearer/);
    }
    const usage = await h.http.get(`/api/user/keys/${keyId}/usage`).set("Authorization", `Bearer ${alice}`);
    expect(usage.status).toBe(200);
    expect(usage.body.total).toBe(4);
    expect(usage.body.records.map((r: { route: string }) => r.route).sort()).toEqual([
      "/api/user/keys",
      "/api/user/keys",
      "/api/user/keys/:key_id",
      "/api/user/keys/:key_id/usage",
    ]);
    expect(usage.body.records.every((r: { status_code: number }) => r.status_code === 401)).toBe(true);
    const still = await h.deps.db.apiKey.findUniqueOrThrow({ where: { id: keyId } });
    expect(still.isActive).toBe(true);
  });
});

describe("revocation and usage", () => {
  it("refuses a revoked key on its very next request", async () => {
    const created = await createKey(alice, { name: "to-revoke" });
    const raw = created.body.raw_key as string;
    const before = await h.http.get("/api/user/keys").set("Authorization", `Bearer ${raw}`);
    expect(before.body.code).toBe("bearer_required");

    const revoked = await h.http.delete(`/api/user/keys/${created.body.key.id}`).set("Authorization", `Bearer ${alice}`);
    expect(revoked.status).toBe(200);
    expect(revoked.body).toMatchObject({ id: created.body.key.id, is_active: false });
    expect(revoked.body.revoked_at).toEqual(expect.any(String));

    const after = await h.http.get("/api/user/keys").set("Authorization", `Bearer ${raw}`);
    expect(after.status).toBe(401);
    expect(after.body).toMatchObject({ code: "key_revoked" });

    const again = await h.http.delete(`/api/user/keys/${created.body.key.id}`).set("Authorization", `Bearer ${alice}`);
    expect(again.status).toBe(200);
    expect(again.body.revoked_at).toBe(revoked.body.revoked_at);
  });

  it("hides another user's key behind 404 and validates the path id", async () => {
    const created = await createKey(alice, { name: "private" });
    const bob = await h.token("bob");
    const del = await h.http.delete(`/api/user/keys/${created.body.key.id}`).set("Authorization", `Bearer ${bob}`);
    expect(del.status).toBe(404);
    expect(del.body).toEqual({ detail: "API key was not found.", code: "not_found" });
    const usage = await h.http.get(`/api/user/keys/${created.body.key.id}/usage`).set("Authorization", `Bearer ${bob}`);
    expect(usage.status).toBe(404);
    const list = await h.http.get("/api/user/keys").set("Authorization", `Bearer ${bob}`);
    expect(list.body.keys.some((k: { id: string }) => k.id === created.body.key.id)).toBe(false);

    const badId = await h.http.delete("/api/user/keys/not-a-uuid").set("Authorization", `Bearer ${alice}`);
    expect(badId.status).toBe(404);
    expect(badId.body).toEqual({ detail: "API key was not found.", code: "not_found" });
  });

  it("pages usage records and validates the paging parameters", async () => {
    const created = await createKey(alice, { name: "paged" });
    const raw = created.body.raw_key as string;
    for (let i = 0; i < 3; i++) await h.http.get("/api/user/keys").set("Authorization", `Bearer ${raw}`);
    const page = await h.http.get(`/api/user/keys/${created.body.key.id}/usage?limit=2&offset=0`).set("Authorization", `Bearer ${alice}`);
    expect(page.body).toMatchObject({ key_id: created.body.key.id, total: 3, limit: 2, offset: 0, next_offset: 2 });
    expect(page.body.records).toHaveLength(2);
    expect(page.body.records[0]).toMatchObject({ method: "GET", route: "/api/user/keys", status_code: 401, scope_used: null });
    const last = await h.http.get(`/api/user/keys/${created.body.key.id}/usage?limit=2&offset=2`).set("Authorization", `Bearer ${alice}`);
    expect(last.body.records).toHaveLength(1);
    expect(last.body.next_offset).toBeNull();
    const bad = await h.http.get(`/api/user/keys/${created.body.key.id}/usage?limit=0`).set("Authorization", `Bearer ${alice}`);
    expect(bad.status).toBe(422);
    expect(bad.body.detail[0].loc).toEqual(["query", "limit"]);
    const notInt = await h.http.get(`/api/user/keys/${created.body.key.id}/usage?offset=1.5`).set("Authorization", `Bearer ${alice}`);
    expect(notInt.status).toBe(422);
    expect(notInt.body.detail[0]).toMatchObject({ loc: ["query", "offset"], type: "int_parsing" });
  });
});
