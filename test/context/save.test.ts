import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ENCODER_MODEL } from "../../src/insights/embed/encoder.js";
import { createHarness, type Harness } from "../helpers/harness.js";
import { projectOf, signIn, type TestUser } from "./helpers.js";

let h: Harness;
let alice: TestUser;
beforeAll(async () => {
  h = await createHarness();
  alice = await signIn(h);
});
afterAll(() => h.close());

describe("POST /agent/v1/context/save: create or replace", () => {
  it("creates a page at a new path, then replaces it in place with version + 1", async () => {
    const first = await alice.save({ title: "Pricing notes", content: "Annual billing first.", path: "notes/pricing", tags: ["pricing"] });
    expect(first.status).toBe(200);
    expect(first.body).toEqual({
      id: expect.any(String),
      path: "notes/pricing",
      title: "Pricing notes",
      tags: ["pricing"],
      project_id: null,
      created: true,
      version: 1,
      updated_at: expect.any(String),
      embedding: "ready",
    });

    const second = await alice.save({ title: "Pricing notes v2", content: "Monthly billing too.", path: "notes/pricing" });
    expect(second.status).toBe(200);
    expect(second.body).toMatchObject({ id: first.body.id, path: "notes/pricing", title: "Pricing notes v2", created: false, version: 2 });
    // Replacing replaces everything: absent tags become none.
    expect(second.body.tags).toEqual([]);
    expect(Date.parse(second.body.updated_at)).toBeGreaterThanOrEqual(Date.parse(first.body.updated_at));

    const stored = await h.deps.db.page.findMany({ where: { userId: alice.id, path: "notes/pricing" } });
    expect(stored).toHaveLength(1);
    expect(stored[0]).toMatchObject({ content: "Monthly billing too.", version: 2, embeddingModel: ENCODER_MODEL });
    expect(stored[0]?.embedding).toHaveLength(384);
  });

  it("is race-safe: concurrent saves to one path create it once and replace it the rest of the times", async () => {
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) => alice.save({ title: `Race ${i}`, content: `body ${i}`, path: "race/one" })),
    );
    expect(results.map((r) => r.status)).toEqual(Array(8).fill(200));
    expect(results.filter((r) => r.body.created)).toHaveLength(1);
    expect(new Set(results.map((r) => r.body.id)).size).toBe(1);
    expect(results.map((r) => r.body.version as number).sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(await h.deps.db.page.count({ where: { userId: alice.id, path: "race/one" } })).toBe(1);
  });

  it("keeps each user's paths apart: the same path of two users is two pages", async () => {
    const bob = await signIn(h);
    const a = await alice.save({ title: "Shared name", content: "alice", path: "same/path" });
    const b = await bob.save({ title: "Shared name", content: "bob", path: "same/path" });
    expect(a.body.created).toBe(true);
    expect(b.body.created).toBe(true);
    expect(a.body.id).not.toBe(b.body.id);
  });
});

describe("POST /agent/v1/context/save: paths", () => {
  it.each([
    ["/notes/a", "notes/a"],
    ["notes/a/", "notes/a"],
    ["//notes///a//", "notes/a"],
    ["\\notes\\a", "notes/a"],
    [" notes /  a ", "notes/a"],
    ["./notes/./a", "notes/a"],
    ["Projects/Acme Corp/Q3", "Projects/Acme Corp/Q3"],
  ])("normalises %j to %j", async (given, expected) => {
    const res = await alice.save({ title: "Path test", content: "x", path: given });
    expect(res.status).toBe(200);
    expect(res.body.path).toBe(expected);
  });

  it("treats spellings of one path as one page", async () => {
    const a = await alice.save({ title: "One", content: "x", path: "/dup/page" });
    const b = await alice.save({ title: "One", content: "y", path: "dup//page/" });
    expect(b.body).toMatchObject({ id: a.body.id, created: false, path: "dup/page" });
  });

  it.each([
    ["notes/../secrets", "'..'"],
    ["..", "'..'"],
    ["/", "at least one segment"],
    ["  ", "at least one segment"],
    ["notes/\u0000a", "control characters"],
    [`${"a".repeat(201)}/b`, "segments should have at most 200"],
    [Array.from({ length: 33 }, () => "s").join("/"), "at most 32 segments"],
    [Array.from({ length: 6 }, () => "x".repeat(100)).join("/"), "at most 512 characters"],
    ["x".repeat(1001), "at most 1000 characters"],
  ])("refuses the path %j with the 422 shape", async (path, message) => {
    const res = await alice.save({ title: "Bad path", content: "x", path });
    expect(res.status).toBe(422);
    expect(res.body.detail).toEqual([{ loc: ["body", "path"], msg: expect.stringContaining(message), type: expect.any(String) }]);
  });

  it.each([
    ["Q3 Pricing Review: Enterprise & SMB!", "q3-pricing-review-enterprise-smb"],
    ["Café Über résumé", "cafe-uber-resume"],
    ["会议记录 2026", "会议记录-2026"],
    ["../../etc/passwd", "etc-passwd"],
    ["!!!", "untitled"],
  ])("derives the path of %j from its title: %j", async (title, path) => {
    const res = await alice.save({ title, content: "derived" });
    expect(res.status).toBe(200);
    expect(res.body.path).toBe(path);
  });

  it("derives at most 120 characters, and the same title again replaces the same page", async () => {
    const title = `${"long title words ".repeat(20)}end`;
    const a = await alice.save({ title, content: "one", path: null });
    const b = await alice.save({ title, content: "two" });
    expect(a.body.path.length).toBeLessThanOrEqual(120);
    expect(a.body.path).toMatch(/^long-title-words-/);
    expect(a.body.path.endsWith("-")).toBe(false);
    expect(b.body).toMatchObject({ id: a.body.id, created: false, version: 2 });
  });
});

describe("POST /agent/v1/context/save: project, tags and bounds", () => {
  it("stores a project the caller can see, and answers 404 for one they cannot", async () => {
    const projectId = await projectOf(h, alice);
    const ok = await alice.save({ title: "In project", content: "x", path: "p/1", project_id: projectId });
    expect(ok.status).toBe(200);
    expect(ok.body.project_id).toBe(projectId);

    const mallory = await signIn(h);
    const foreign = await mallory.save({ title: "Sneaky", content: "x", path: "p/1", project_id: projectId });
    expect(foreign.status).toBe(404);
    expect(foreign.body).toEqual({ detail: expect.any(String), code: "not_found" });
    const unknown = await alice.save({ title: "Unknown", content: "x", project_id: "00000000-0000-4000-8000-000000000000" });
    expect(unknown.status).toBe(404);
    expect(await h.deps.db.page.count({ where: { userId: mallory.id } })).toBe(0);
  });

  it("trims tags, drops duplicates and accepts null for optional fields", async () => {
    const res = await alice.save({ title: "Tags", content: "x", path: "tags/1", tags: [" a ", "b", "a"], project_id: null });
    expect(res.status).toBe(200);
    expect(res.body.tags).toEqual(["a", "b"]);
  });

  it("accepts 500,000 characters of content and refuses 500,001 with the 422 shape", async () => {
    const ok = await alice.save({ title: "Big", content: "word ".repeat(100_000), path: "big/ok" });
    expect(ok.status).toBe(200);
    const res = await alice.save({ title: "Too big", content: "x".repeat(500_001), path: "big/no" });
    expect(res.status).toBe(422);
    expect(res.body).toEqual({
      detail: [{ loc: ["body", "content"], msg: "String should have at most 500000 characters", type: "string_too_long" }],
    });
    expect(await h.deps.db.page.count({ where: { userId: alice.id, path: "big/no" } })).toBe(0);
  });

  it.each([
    [{ content: "x" }, ["body", "title"], "missing"],
    [{ title: "   ", content: "x" }, ["body", "title"], "string_too_short"],
    [{ title: "t" }, ["body", "content"], "missing"],
    [{ title: "t", content: "x", tags: "a" }, ["body", "tags"], "list_type"],
    [{ title: "t", content: "x", tags: Array(51).fill("t") }, ["body", "tags"], "too_long"],
    [{ title: "t", content: "x", project_id: "not-a-uuid" }, ["body", "project_id"], "uuid_parsing"],
    [{ title: "t", content: "nul \u0000 inside" }, ["body", "content"], "string_nul"],
    [{ title: "t", content: "x", tags: [" "] }, ["body", "tags", 0], "string_too_short"],
  ])("refuses %j with the 422 shape", async (body, loc, type) => {
    const res = await alice.save(body);
    expect(res.status).toBe(422);
    expect(res.body.detail).toContainEqual({ loc, msg: expect.any(String), type });
  });
});

describe("context routes take the user session bearer only", () => {
  it("refuses a valid API key (even with * scope) with 401 on save and recall", async () => {
    const created = await h.http
      .post("/api/user/keys")
      .set("Authorization", alice.auth)
      .send({ name: "agent", scopes: ["*"] });
    expect(created.status).toBe(201);
    const key = created.body.raw_key as string;
    const save = await h.http.post("/agent/v1/context/save").set("Authorization", `Bearer ${key}`).send({ title: "k", content: "k" });
    const recall = await h.http.get("/agent/v1/context/recall").set("X-API-Key", key).query({ query: "k" });
    for (const res of [save, recall]) {
      expect(res.status).toBe(401);
      expect(res.body.code).toBe("bearer_required");
    }
    expect(await h.deps.db.page.count({ where: { userId: alice.id, title: "k" } })).toBe(0);
  });

  it("refuses a missing credential with 401", async () => {
    expect((await h.http.post("/agent/v1/context/save").send({ title: "t", content: "c" })).status).toBe(401);
    expect((await h.http.get("/agent/v1/context/recall").query({ query: "q" })).status).toBe(401);
  });
});
