import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deriveJobId } from "../../src/platform/queues.js";
import { createHarness, type Harness } from "../helpers/harness.js";
import { bearer, createJob, newEntity } from "./support.js";

let h: Harness;
let token: string;
let userId: string;
let entityId: string;

beforeAll(async () => {
  h = await createHarness();
  token = await h.token("collector-owner");
  entityId = (await newEntity(h, token, { platforms: ["reddit", "hackernews", "twitter"] })).id;
  userId = (await h.deps.db.user.findUniqueOrThrow({ where: { sub: "collector-owner" } })).id;
});
afterAll(() => h.close());

const body = (extra: Record<string, unknown> = {}) => ({ entity_id: entityId, objective: "Why do teams churn from Acme?", ...extra });
const rowsFor = (key: string) => h.deps.db.collectionJob.findMany({ where: { userId, idempotencyKey: key } });

describe("POST /agent/v1/ingest/collection/jobs: create", () => {
  it("answers the spec's fields, stores the row and enqueues a job under the derived id", async () => {
    const res = await createJob(h, token, body({ idempotency_key: "create-first-0001", platforms: ["reddit", "hackernews"] }));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      status: "queued",
      job_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      entity_id: entityId,
      next: `/agent/v1/ingest/collection/jobs/${res.body.job_id}`,
      analysis_id: "",
    });
    const [row] = await rowsFor("create-first-0001");
    expect(row).toMatchObject({
      id: res.body.job_id,
      status: "queued",
      platforms: ["reddit", "hackernews"],
      collectionOnly: false,
      depth: "brief",
    });
    const job = await h.deps.queues.get("collection").getJob(deriveJobId("collection", userId, "create-first-0001"));
    expect(job?.name).toBe("collection.run.v1");
    expect(job?.data).toEqual({ jobId: res.body.job_id });
  });

  it("accepts keys BullMQ would refuse as ids (with ':' or all digits)", async () => {
    for (const key of ["tenant:job:2026-01", "1234567890"]) {
      const res = await createJob(h, token, body({ idempotency_key: key }));
      expect(res.status, key).toBe(200);
      const job = await h.deps.queues.get("collection").getJob(deriveJobId("collection", userId, key));
      expect(job?.data).toEqual({ jobId: res.body.job_id });
    }
  });

  it("same key and same body answers the same job (200, same body) and makes no second row", async () => {
    const first = await createJob(h, token, body({ idempotency_key: "replay-key-0001", questions: ["What breaks?"] }));
    const second = await createJob(h, token, body({ idempotency_key: "replay-key-0001", questions: ["What breaks?"] }));
    expect(first.status).toBe(200);
    expect(second.status).toBe(200);
    expect(second.body).toEqual(first.body);
    expect(await rowsFor("replay-key-0001")).toHaveLength(1);
    expect(await h.deps.queues.get("collection").getJobCounts("waiting")).toBeDefined();
  });

  it("treats defaults and null as the same request (null = absent; platform order does not matter)", async () => {
    const a = await createJob(h, token, body({ idempotency_key: "defaults-key-01", platforms: ["web", "reddit"], depth: null }));
    const b = await createJob(
      h,
      token,
      body({ idempotency_key: "defaults-key-01", platforms: ["reddit", "web"], depth: "brief", collection_only: false }),
    );
    expect(b.status).toBe(200);
    expect(b.body.job_id).toBe(a.body.job_id);
  });

  it("same key and a different body is a 409 idempotency_conflict", async () => {
    await createJob(h, token, body({ idempotency_key: "conflict-key-01" }));
    const res = await createJob(h, token, body({ idempotency_key: "conflict-key-01", depth: "deep" }));
    expect(res.status).toBe(409);
    expect(res.body).toEqual({ detail: expect.any(String), code: "idempotency_conflict" });
    const other = await createJob(h, token, body({ idempotency_key: "conflict-key-01", collection_only: true }));
    expect(other.status).toBe(409);
    expect(await rowsFor("conflict-key-01")).toHaveLength(1);
  });

  it("concurrent creates with one key make one job", async () => {
    const answers = await Promise.all(Array.from({ length: 12 }, () => createJob(h, token, body({ idempotency_key: "race-key-000001" }))));
    expect(answers.map((r) => r.status)).toEqual(Array(12).fill(200));
    expect(new Set(answers.map((r) => r.body.job_id)).size).toBe(1);
    expect(await rowsFor("race-key-000001")).toHaveLength(1);
    const queued = await h.deps.queues.get("collection").getJobs(["waiting", "delayed", "active", "prioritized"]);
    expect(queued.filter((j) => j.data.jobId === answers[0]?.body.job_id)).toHaveLength(1);
  });

  it("without a key, each create is a new job with a generated key", async () => {
    const a = await createJob(h, token, body());
    const b = await createJob(h, token, body());
    expect(a.status).toBe(200);
    expect(b.status).toBe(200);
    expect(a.body.job_id).not.toBe(b.body.job_id);
    const rows = await h.deps.db.collectionJob.findMany({ where: { id: { in: [a.body.job_id, b.body.job_id] } } });
    expect(rows.map((r) => r.idempotencyKey)).toEqual([expect.stringMatching(/^auto-/), expect.stringMatching(/^auto-/)]);
  });

  it("defaults platforms to the entity's platforms that have a collector", async () => {
    const res = await createJob(h, token, body({ idempotency_key: "default-platforms" }));
    const row = await h.deps.db.collectionJob.findUniqueOrThrow({ where: { id: res.body.job_id } });
    expect(row.platforms.sort()).toEqual(["hackernews", "reddit"]);
  });

  it("defaults to every collector for an entity without platforms, and to the entity's own when none has a collector", async () => {
    const bare = await newEntity(h, token, { name: "Bareco" });
    const a = await createJob(h, token, { entity_id: bare.id, objective: "Everything please" });
    expect((await h.deps.db.collectionJob.findUniqueOrThrow({ where: { id: a.body.job_id } })).platforms).toEqual([
      "hackernews",
      "reddit",
      "github",
      "web",
    ]);
    const social = await newEntity(h, token, { name: "Socialco", platforms: ["twitter", "linkedin", "twitter"] });
    const b = await createJob(h, token, { entity_id: social.id, objective: "Socials please" });
    expect((await h.deps.db.collectionJob.findUniqueOrThrow({ where: { id: b.body.job_id } })).platforms).toEqual(["twitter", "linkedin"]);
    const mixed = await newEntity(h, token, { name: "Mixedco", platforms: ["twitter", "web", "github"] });
    const c = await createJob(h, token, { entity_id: mixed.id, objective: "Mixed please" });
    expect((await h.deps.db.collectionJob.findUniqueOrThrow({ where: { id: c.body.job_id } })).platforms).toEqual(["web", "github"]);
  });

  it("answers 404 for an entity the caller cannot see, and creates nothing", async () => {
    const stranger = await h.token("collection-stranger");
    const res = await createJob(h, stranger, body({ idempotency_key: "stranger-key-01" }));
    expect(res.status).toBe(404);
    expect(await h.deps.db.collectionJob.count({ where: { idempotencyKey: "stranger-key-01" } })).toBe(0);
  });

  it("validates every field to the spec with the 422 shape", async () => {
    const cases: [Record<string, unknown>, (string | number)[]][] = [
      [{ entity_id: entityId, objective: "ab" }, ["body", "objective"]],
      [{ entity_id: entityId, objective: "x".repeat(1001) }, ["body", "objective"]],
      [{ objective: "valid objective" }, ["body", "entity_id"]],
      [{ entity_id: "x".repeat(101), objective: "valid objective" }, ["body", "entity_id"]],
      [body({ questions: ["a", "b", "c", "d", "e", "f"] }), ["body", "questions"]],
      [body({ questions: [""] }), ["body", "questions", 0]],
      [body({ depth: "medium" }), ["body", "depth"]],
      [body({ platforms: ["github"] }), ["body", "platforms", 0]],
      [body({ platforms: Array(10).fill("reddit") }), ["body", "platforms"]],
      [body({ idempotency_key: "short" }), ["body", "idempotency_key"]],
      [body({ idempotency_key: "x".repeat(129) }), ["body", "idempotency_key"]],
      [body({ idempotency_key: "-leading-dash" }), ["body", "idempotency_key"]],
      [body({ idempotency_key: "has space in it" }), ["body", "idempotency_key"]],
      [body({ collection_only: "yes" }), ["body", "collection_only"]],
    ];
    for (const [payload, loc] of cases) {
      const res = await createJob(h, token, payload);
      expect(res.status, JSON.stringify(payload).slice(0, 80)).toBe(422);
      expect(res.body.detail).toContainEqual(expect.objectContaining({ loc, msg: expect.any(String), type: expect.any(String) }));
    }
  });

  it("accepts the spec's maxima and ignores unknown fields", async () => {
    const res = await createJob(
      h,
      token,
      body({
        objective: "o".repeat(1000),
        questions: ["1", "2", "3", "4", "5"],
        platforms: ["twitter", "linkedin", "reddit", "youtube", "tiktok", "instagram", "hackernews", "producthunt", "web"],
        idempotency_key: `k${"x".repeat(127)}`,
        something_new: true,
      }),
    );
    expect(res.status).toBe(200);
  });

  it("requires a credential and takes a key with the ingest scope", async () => {
    expect((await h.http.post("/agent/v1/ingest/collection/jobs").send(body())).status).toBe(401);
    const key = await h.http
      .post("/api/user/keys")
      .set(bearer(token))
      .send({ name: "ingest", scopes: ["ingest"] });
    const res = await h.http
      .post("/agent/v1/ingest/collection/jobs")
      .set("X-API-Key", key.body.raw_key)
      .send(body({ idempotency_key: "via-key-000001" }));
    expect(res.status).toBe(200);
    const poll = await h.http.get(`/agent/v1/ingest/collection/jobs/${res.body.job_id}`).set("X-API-Key", key.body.raw_key);
    expect(poll.status).toBe(200);
    const exportKey = await h.http
      .post("/api/user/keys")
      .set(bearer(token))
      .send({ name: "export", scopes: ["export"] });
    expect((await h.http.post("/agent/v1/ingest/collection/jobs").set("X-API-Key", exportKey.body.raw_key).send(body())).status).toBe(403);
  });
});

describe("GET /agent/v1/ingest/collection/jobs/:job_id", () => {
  it("answers status, per-platform progress, counts, coverage and next for a queued job", async () => {
    const created = await createJob(
      h,
      token,
      body({ idempotency_key: "poll-key-000001", platforms: ["reddit", "twitter"], questions: ["Q1"] }),
    );
    const res = await h.http.get(`/agent/v1/ingest/collection/jobs/${created.body.job_id}`).set(bearer(token));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      job_id: created.body.job_id,
      status: "queued",
      stalled_reason: null,
      entity_id: entityId,
      route: "collection",
      questions: ["Q1"],
      platforms: ["reddit", "twitter"],
      counts: { found: 0, stored: 0, inserted: 0, deduplicated: 0 },
      coverage: { reddit: null, twitter: null },
      errors: [],
      analysis_id: "",
      next: `/agent/v1/ingest/collection/jobs/${created.body.job_id}`,
    });
    expect(res.body.progress.reddit).toMatchObject({ status: "pending", pages: 0, found: 0 });
  });

  it("answers 404 to another user and for unknown or malformed ids", async () => {
    const created = await createJob(h, token, body({ idempotency_key: "poll-key-000002" }));
    const stranger = await h.token("poll-stranger");
    expect((await h.http.get(`/agent/v1/ingest/collection/jobs/${created.body.job_id}`).set(bearer(stranger))).status).toBe(404);
    expect((await h.http.get("/agent/v1/ingest/collection/jobs/00000000-0000-4000-8000-000000000000").set(bearer(token))).status).toBe(404);
    expect((await h.http.get("/agent/v1/ingest/collection/jobs/not-a-uuid").set(bearer(token))).status).toBe(404);
  });
});

describe("POST /agent/v1/ingest/research/jobs (older route)", () => {
  it("creates a job that always continues into synthesis, with the same idempotency rules", async () => {
    const res = await createJob(h, token, body({ idempotency_key: "research-key-01" }), "/agent/v1/ingest/research/jobs");
    expect(res.status).toBe(200);
    expect(res.body.next).toBe(`/agent/v1/ingest/research/jobs/${res.body.job_id}`);
    const row = await h.deps.db.collectionJob.findUniqueOrThrow({ where: { id: res.body.job_id } });
    expect(row).toMatchObject({ route: "research", collectionOnly: false });
    const again = await createJob(h, token, body({ idempotency_key: "research-key-01" }), "/agent/v1/ingest/research/jobs");
    expect(again.body).toEqual(res.body);
    const changed = await createJob(
      h,
      token,
      body({ idempotency_key: "research-key-01", depth: "deep" }),
      "/agent/v1/ingest/research/jobs",
    );
    expect(changed.status).toBe(409);
    const poll = await h.http.get(`/agent/v1/ingest/research/jobs/${res.body.job_id}`).set(bearer(token));
    expect(poll.status).toBe(200);
    expect(poll.body).toMatchObject({ route: "research", collection_only: false });
  });

  it("refuses collection_only: true rather than starting synthesis the caller did not want", async () => {
    const res = await createJob(
      h,
      token,
      body({ idempotency_key: "research-key-02", collection_only: true }),
      "/agent/v1/ingest/research/jobs",
    );
    expect(res.status).toBe(422);
    expect(res.body.detail[0].loc).toEqual(["body", "collection_only"]);
    expect(await rowsFor("research-key-02")).toHaveLength(0);
  });

  it("a key used on the collection route cannot be replayed on the research route", async () => {
    await createJob(h, token, body({ idempotency_key: "cross-route-01" }));
    const res = await createJob(h, token, body({ idempotency_key: "cross-route-01" }), "/agent/v1/ingest/research/jobs");
    expect(res.status).toBe(409);
  });
});
