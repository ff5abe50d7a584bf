import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { analysisJobId, submitAnalysis } from "../../src/insights/analysis/jobs.js";
import { RunBody } from "../../src/insights/analysis/schemas.js";
import { notesJobId } from "../../src/intake/notes/service.js";
import { createHarness, type Harness, randomId } from "../helpers/harness.js";
import { person as signedIn } from "./support.js";

/**
 * Jobs are the workspace's, not their starter's: analyses, collection and research jobs, workflow
 * runs, meeting-note syncs and evidence-capture runs are read by every member of the workspace and
 * cancelled by its editors and above, whoever started them. A viewer who cancels or starts one gets
 * 403 `forbidden` and nothing changes; a non-member gets 404, as for an unknown id. No workers run,
 * so started jobs stay queued. Real HTTP, PostgreSQL and Redis.
 */
let h: Harness;
const auth = (token: string) => ({ Authorization: `Bearer ${token}` });

beforeAll(async () => {
  h = await createHarness({ NOTES_SYNC_WAIT_MS: "0", SWEEP_WAIT_MS: "0" });
});
afterAll(() => h.close());

interface Person {
  token: string;
  userId: string;
}

const person = () => signedIn(h);

/** A workspace (an onboarded company with one skill) with an editor who starts jobs, a second editor, a viewer, and a stranger. */
async function team() {
  const owner = await person();
  const onboarded = await h.http
    .post("/api/entities/onboarding")
    .set(auth(owner.token))
    .send({
      company: { name: `Acme ${randomId()}` },
      research_objectives: [{ id: randomId("churn-"), title: "Why do teams churn?", question: "What makes teams leave?" }],
    })
    .expect(201);
  const workspaceId = onboarded.body.workspace_id as string;
  const [starter, editor, viewer, stranger] = [await person(), await person(), await person(), await person()];
  for (const [member, role] of [
    [starter, "editor"],
    [editor, "editor"],
    [viewer, "viewer"],
  ] as const) {
    await h.http.post(`/api/workspaces/${workspaceId}/members`).set(auth(owner.token)).send({ user_id: member.userId, role }).expect(201);
  }
  const entityId = onboarded.body.company.id as string;
  return {
    owner,
    starter,
    editor,
    viewer,
    stranger,
    workspaceId,
    entityId,
    skillKey: onboarded.body.research_objectives[0].skill_id as string,
  };
}
type Team = Awaited<ReturnType<typeof team>>;

function expectForbidden(res: { status: number; body: Record<string, unknown> }) {
  expect(res.status, JSON.stringify(res.body)).toBe(403);
  expect(res.body).toMatchObject({ code: "forbidden" });
}

describe("analyses", () => {
  const read = (id: string, p: Person) => h.http.get(`/agent/v1/analysis/${id}`).set(auth(p.token));
  const cancel = (id: string, p: Person) => h.http.post(`/agent/v1/analysis/${id}/cancel`).set(auth(p.token));
  const statusOf = async (id: string) => (await h.deps.db.analysis.findUniqueOrThrow({ where: { id } })).status;

  /** A failed analysis with its terminal event, as a worker leaves one. */
  async function finishedAnalysis(t: Team) {
    const row = await h.deps.db.analysis.create({
      data: {
        userId: t.starter.userId,
        workspaceId: t.workspaceId,
        entityId: t.entityId,
        question: "Why?",
        status: "failed",
        finishedAt: new Date(),
      },
    });
    const data = { analysis_id: row.id, status: "failed", detail: "The analysis failed." };
    await h.deps.db.analysisEvent.create({ data: { analysisId: row.id, seq: 1, event: "error", data } });
    return row.id;
  }

  it("is read, and its event stream replayed, by a viewer; a stranger gets 404", async () => {
    const t = await team();
    const id = await finishedAnalysis(t);
    const record = await read(id, t.viewer);
    expect(record.status).toBe(200);
    expect(record.body).toMatchObject({ analysis_id: id, status: "failed", entity_id: t.entityId });
    const stream = await h.http.get(`/agent/v1/analysis/${id}/events`).set(auth(t.viewer.token));
    expect(stream.status).toBe(200);
    expect(stream.headers["content-type"]).toMatch(/^text\/event-stream/);
    expect(stream.text).toMatch(/event: error\n/);
    expect(stream.text).toContain('"status":"failed"');

    for (const res of [await read(id, t.stranger), await h.http.get(`/agent/v1/analysis/${id}/events`).set(auth(t.stranger.token))]) {
      expect(res.status).toBe(404);
      expect(res.body).toMatchObject({ code: "not_found" });
    }
  });

  it("is cancelled by another editor, refused to a viewer with 403 (also once finished) and to a stranger with 404", async () => {
    const t = await team();
    const { analysis } = await submitAnalysis(
      h.deps,
      t.starter.userId,
      RunBody.parse({ question: "Why do teams churn?", entity_id: t.entityId }),
    );
    const queue = h.deps.queues.get("analysis");
    expect(await queue.getJobState(analysisJobId(analysis.id))).toBe("waiting");

    expectForbidden(await cancel(analysis.id, t.viewer));
    expect((await cancel(analysis.id, t.stranger)).status).toBe(404);
    expect(await statusOf(analysis.id)).toBe("queued");
    expect(await queue.getJobState(analysisJobId(analysis.id))).toBe("waiting");

    const cancelled = await cancel(analysis.id, t.editor);
    expect(cancelled.status, JSON.stringify(cancelled.body)).toBe(200);
    expect(cancelled.body).toMatchObject({ analysis_id: analysis.id, status: "cancelled" });
    expect(await statusOf(analysis.id)).toBe("cancelled");
    expect(await queue.getJob(analysisJobId(analysis.id))).toBeUndefined();
    expect((await read(analysis.id, t.starter)).body).toMatchObject({ status: "cancelled" });

    // The role is checked before the job's state: a viewer's cancel of a finished analysis is a 403, not a 409.
    const finished = await finishedAnalysis(t);
    expectForbidden(await cancel(finished, t.viewer));
    expect(await statusOf(finished)).toBe("failed");
  });
});

describe("collection and research jobs", () => {
  const create = (p: Person, route: string, body: Record<string, unknown>) =>
    h.http
      .post(`/agent/v1/ingest/${route}/jobs`)
      .set(auth(p.token))
      .send({ objective: "Why do teams churn?", platforms: ["hackernews"], ...body });
  const statusOf = async (id: string) => (await h.deps.db.collectionJob.findUniqueOrThrow({ where: { id } })).status;

  for (const route of ["collection", "research"]) {
    it(`a ${route} job is polled by a viewer, cancelled by another editor, refused to a viewer (403) and a stranger (404)`, async () => {
      const t = await team();
      const created = await create(t.starter, route, { entity_id: t.entityId, idempotency_key: randomId("job-") });
      expect(created.status, JSON.stringify(created.body)).toBe(200);
      const jobId = created.body.job_id as string;
      const path = `/agent/v1/ingest/${route}/jobs/${jobId}`;

      const polled = await h.http.get(path).set(auth(t.viewer.token));
      expect(polled.status).toBe(200);
      expect(polled.body).toMatchObject({ job_id: jobId, status: "queued", entity_id: t.entityId });
      expect((await h.http.get(path).set(auth(t.stranger.token))).status).toBe(404);

      expectForbidden(await h.http.post(`${path}/cancel`).set(auth(t.viewer.token)));
      expect((await h.http.post(`${path}/cancel`).set(auth(t.stranger.token))).status).toBe(404);
      expect(await statusOf(jobId)).toBe("queued");

      const cancelled = await h.http.post(`${path}/cancel`).set(auth(t.editor.token));
      expect(cancelled.status, JSON.stringify(cancelled.body)).toBe(200);
      expect(cancelled.body).toMatchObject({ job_id: jobId, status: "cancelled" });
      expect(await statusOf(jobId)).toBe("cancelled");
    });
  }

  for (const route of ["collection", "research"]) {
    it(`a ${route} job is no longer read by its starter once she left the workspace, with her bearer or her * key`, async () => {
      const t = await team();
      const key = await h.http
        .post("/api/user/keys")
        .set(auth(t.starter.token))
        .send({ name: "agent", scopes: ["*"] })
        .expect(201);
      const created = await create(t.starter, route, { entity_id: t.entityId, idempotency_key: randomId("leaver-") });
      expect(created.status, JSON.stringify(created.body)).toBe(200);
      const path = `/agent/v1/ingest/${route}/jobs/${created.body.job_id}`;
      expect((await h.http.get(path).set(auth(t.starter.token))).status).toBe(200);

      const membership = await h.deps.db.workspaceMember.findUniqueOrThrow({
        where: { workspaceId_userId: { workspaceId: t.workspaceId, userId: t.starter.userId } },
      });
      await h.http.delete(`/api/workspaces/${t.workspaceId}/members/${membership.id}`).set(auth(t.starter.token)).expect(204);

      for (const credential of [auth(t.starter.token), { "X-API-Key": key.body.raw_key as string }]) {
        const read = await h.http.get(path).set(credential);
        expect(read.status, JSON.stringify(read.body)).toBe(404);
        expect(read.body).toEqual({ detail: "Collection job was not found.", code: "not_found" });
        expect(JSON.stringify(read.body)).not.toContain("churn");
        expect((await h.http.post(`${path}/cancel`).set(credential)).status).toBe(404);
      }
      // The job goes on, and the workspace's members still follow it.
      expect((await h.http.get(path).set(auth(t.viewer.token))).status).toBe(200);
      expect(await statusOf(created.body.job_id)).toBe("queued");
    });
  }

  it("refuses a viewer's create with 403, also a replay of a key they used as an editor, and writes nothing", async () => {
    const t = await team();
    const refused = await create(t.viewer, "collection", { entity_id: t.entityId, idempotency_key: randomId("viewer-") });
    expectForbidden(refused);
    expect(await h.deps.db.collectionJob.count({ where: { userId: t.viewer.userId } })).toBe(0);
    expect((await create(t.stranger, "research", { entity_id: t.entityId })).status).toBe(404);

    const key = randomId("replay-");
    expect((await create(t.starter, "collection", { entity_id: t.entityId, idempotency_key: key })).status).toBe(200);
    // Demoted to viewer (the member routes are tested in members.test.ts): the replay is refused, not answered.
    await h.deps.db.workspaceMember.update({
      where: { workspaceId_userId: { workspaceId: t.workspaceId, userId: t.starter.userId } },
      data: { role: "viewer" },
    });
    expectForbidden(await create(t.starter, "collection", { entity_id: t.entityId, idempotency_key: key }));
    expect(await h.deps.db.collectionJob.count({ where: { userId: t.starter.userId } })).toBe(1);
  });
});

describe("workflow runs", () => {
  it("is read by a viewer and cancelled by another editor; a viewer's cancel is 403 and a stranger's 404", async () => {
    const t = await team();
    const skill = await h.deps.db.skill.findUniqueOrThrow({ where: { entityId_key: { entityId: t.entityId, key: t.skillKey } } });
    const run = await h.deps.db.workflowRun.create({
      data: {
        skillId: skill.id,
        skillKey: skill.key,
        entityId: t.entityId,
        workspaceId: t.workspaceId,
        userId: t.starter.userId,
        idempotencyKey: randomId("run-"),
        requestHash: "0".repeat(64),
        scopeHash: "0".repeat(64),
        sourceMode: "saved",
        maxChargeCredits: 0,
      },
    });
    const path = `/api/entities/${t.entityId}/skills/${t.skillKey}/runs/${run.id}`;
    const statusOf = async () => (await h.deps.db.workflowRun.findUniqueOrThrow({ where: { id: run.id } })).status;

    const read = await h.http.get(path).set(auth(t.viewer.token));
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ id: run.id, status: "queued" });
    expect((await h.http.get(path).set(auth(t.stranger.token))).status).toBe(404);

    expectForbidden(await h.http.post(`${path}/cancel`).set(auth(t.viewer.token)));
    expect((await h.http.post(`${path}/cancel`).set(auth(t.stranger.token))).status).toBe(404);
    expect(await statusOf()).toBe("queued");

    const cancelled = await h.http.post(`${path}/cancel`).set(auth(t.editor.token));
    expect(cancelled.status, JSON.stringify(cancelled.body)).toBe(200);
    expect(cancelled.body).toMatchObject({ id: run.id, status: "cancelled" });
    expect(await statusOf()).toBe("cancelled");
  });
});

describe("meeting-note syncs", () => {
  const sync = (p: Person, body: Record<string, unknown>) =>
    h.http
      .post("/api/meetingnotes/sync")
      .set(auth(p.token))
      .send({ api_key: `grn_${randomUUID()}`, ...body });
  const status = (p: Person, requestId: string) => h.http.get(`/api/meetingnotes/sync/${requestId}`).set(auth(p.token));
  const cancel = (p: Person, requestId: string) => h.http.post(`/api/meetingnotes/sync/${requestId}/cancel`).set(auth(p.token));
  const rowOf = (userId: string, requestId: string) =>
    h.deps.db.noteSync.findUniqueOrThrow({ where: { userId_requestId_attempt: { userId, requestId, attempt: 1 } } });

  it("is read by another member by its request id and cancelled by another editor; a viewer's cancel is 403", async () => {
    const t = await team();
    const requestId = randomId("notes-");
    const started = await sync(t.starter, { entity_id: t.entityId, request_id: requestId });
    expect(started.status, JSON.stringify(started.body)).toBe(202);
    const queued = { status: "queued", request_id: requestId, entity_id: t.entityId };
    for (const member of [t.viewer, t.editor]) expect((await status(member, requestId)).body).toMatchObject(queued);
    expect((await status(t.stranger, requestId)).status).toBe(404);

    const queue = h.deps.queues.get("notes-sync");
    const jobId = notesJobId(t.starter.userId, requestId);
    expectForbidden(await cancel(t.viewer, requestId));
    expect((await cancel(t.stranger, requestId)).status).toBe(404);
    expect((await rowOf(t.starter.userId, requestId)).status).toBe("queued");
    expect(await queue.getJobState(jobId)).toBe("waiting");

    const cancelled = await cancel(t.editor, requestId);
    expect(cancelled.status, JSON.stringify(cancelled.body)).toBe(200);
    expect(cancelled.body).toEqual({ status: "cancelled", request_id: requestId, entity_id: t.entityId, attempt: 1, retry_of: null });
    expect((await rowOf(t.starter.userId, requestId)).status).toBe("cancelled");
    // The queue entry is the starter's, removed by another member's cancel.
    expect(await queue.getJob(jobId)).toBeUndefined();
  });

  it("answers the caller's own sync first, else the newest one of the workspace with that request id", async () => {
    const t = await team();
    const requestId = randomId("shared-");
    expect((await sync(t.starter, { entity_id: t.entityId, request_id: requestId })).status).toBe(202);
    expect((await cancel(t.starter, requestId)).status).toBe(200);
    expect((await sync(t.editor, { entity_id: t.entityId, request_id: requestId })).status).toBe(202);

    expect((await status(t.starter, requestId)).body).toMatchObject({ status: "cancelled" });
    expect((await status(t.editor, requestId)).body).toMatchObject({ status: "queued" });
    expect((await status(t.viewer, requestId)).body).toMatchObject({ status: "queued" });
  });

  it("refuses a viewer's sync with 403 and stores nothing", async () => {
    const t = await team();
    expectForbidden(await sync(t.viewer, { entity_id: t.entityId, request_id: randomId("viewer-") }));
    expect(await h.deps.db.noteSync.count({ where: { userId: t.viewer.userId } })).toBe(0);
    expect((await sync(t.stranger, { entity_id: t.entityId })).status).toBe(404);
  });
});

describe("evidence-capture runs", () => {
  it("is read by a viewer (404 for a stranger); a viewer's start is 403 and stores nothing", async () => {
    const t = await team();
    const started = await h.http
      .post("/api/sweeps/run")
      .set(auth(t.starter.token))
      .send({ entity_id: t.entityId, idempotency_key: randomId("capture-") });
    expect(started.status, JSON.stringify(started.body)).toBe(202);
    const path = `/api/sweeps/runs/${started.body.run_id}`;
    const read = await h.http.get(path).set(auth(t.viewer.token));
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ run_id: started.body.run_id, entity_id: t.entityId, status: "queued" });
    expect((await h.http.get(path).set(auth(t.stranger.token))).status).toBe(404);

    const refused = await h.http
      .post("/api/sweeps/run")
      .set(auth(t.viewer.token))
      .send({ entity_id: t.entityId, idempotency_key: randomId("capture-") });
    expectForbidden(refused);
    expect(await h.deps.db.sweepRun.count({ where: { userId: t.viewer.userId } })).toBe(0);
  });
});
