import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runEntityDeletion } from "../../src/governance/deletion/entity-run.js";
import { markDeletionFailed } from "../../src/governance/deletion/resumable.js";
import { entityDeletionProcessor } from "../../workers/entity-deletion.js";
import { waitFor } from "../analysis/fixtures.js";
import { createHarness, type Harness } from "../helpers/harness.js";
import { addMember, auth, createTeam, enrich, ingest, search, type Team, tablesContaining } from "./support.js";

/**
 * Deleting an entity (DELETE /api/entities/{entity_id}, admins): its running jobs are cancelled through
 * their kinds' cancels, its originals go in batches (here 2 at a time) as a resumable job whose progress is
 * read while it runs, then the entity with everything hanging off it. A word only the entity's originals,
 * comments, knowledge record, analysis, skill and coverage held is then in no column of any table; another
 * entity of the same workspace is untouched, and a competitor it was the parent of stays, without a parent.
 */
const MARKER = "quixotrandel";

let h: Harness;
let team: Team;
let admin: { token: string; userId: string };
let otherEntityId: string;
let competitorId: string;
let otherRecordId: string;
let otherContentCount: number;
const jobs = {} as Record<"collection" | "analysis" | "run" | "sync" | "sweep", string>;

beforeAll(async () => {
  h = await createHarness({ ERASURE_BATCH_SIZE: "2" });
  team = await createTeam(h);
  admin = await addMember(h, team, "admin");
  const db = h.deps.db;
  const other = await h.http.post("/api/entities").set(auth(team.token)).send({ name: "Other product", workspace_id: team.workspaceId });
  expect(other.status, JSON.stringify(other.body)).toBe(201);
  otherEntityId = other.body.id;
  const competitor = await h.http
    .post("/api/entities")
    .set(auth(team.token))
    .send({ name: "Rival", kind: "competitor", workspace_id: team.workspaceId, parent_entity_id: team.entityId });
  expect(competitor.status, JSON.stringify(competitor.body)).toBe(201);
  competitorId = competitor.body.id;

  const stored = await ingest(
    h,
    team.token,
    team.entityId,
    Array.from({ length: 5 }, (_, i) => ({
      id: `src-${i}-${randomUUID()}`,
      platform: "reddit",
      title: `The ${MARKER} thread ${i}`,
      author: `author_${MARKER}_${i}`,
      content: `The ${MARKER} export keeps crashing and the ${MARKER} is terrible (${i}).`,
      comments: [{ author: "replier", text: `Same here, ${MARKER} is slow (${i}).` }],
    })),
  );
  const kept = await ingest(h, team.token, otherEntityId, [
    { platform: "reddit", author: "carol", content: "The export keeps crashing on large files." },
    { platform: "hackernews", author: "dave", content: "Sync is slow but the editor is great.", comments: [{ text: "Agreed." }] },
  ]);
  await enrich(h, [...stored.content_ids, ...kept.content_ids]);
  otherContentCount = await db.content.count({ where: { entityId: otherEntityId } });

  // A knowledge record of each entity.
  const record = await h.http
    .post("/agent/v1/knowledge/insights")
    .set(auth(team.token))
    .send({
      entity_id: team.entityId,
      request_id: randomUUID(),
      expected_revision: 0,
      title: `The ${MARKER} crashes`,
      summary: `People say the ${MARKER} export crashes.`,
      evidence: [{ content_id: stored.parent_content_ids[0], quote: `The ${MARKER} export keeps crashing` }],
    });
  expect(record.status, JSON.stringify(record.body)).toBe(201);
  const otherRecord = await h.http
    .post("/agent/v1/knowledge/insights")
    .set(auth(team.token))
    .send({
      entity_id: otherEntityId,
      request_id: randomUUID(),
      expected_revision: 0,
      title: "Exports crash",
      summary: "Large files crash the export.",
      evidence: [{ content_id: kept.parent_content_ids[0], quote: "The export keeps crashing" }],
    });
  expect(otherRecord.status, JSON.stringify(otherRecord.body)).toBe(201);
  otherRecordId = otherRecord.body.record.id;

  // A finished analysis of the entity that quotes it, with its stored events and insight.
  const done = await db.analysis.create({
    data: {
      userId: team.userId,
      workspaceId: team.workspaceId,
      entityId: team.entityId,
      question: `What about the ${MARKER}?`,
      status: "completed",
      result: { data: { answer: `The ${MARKER} crashes [1].` } },
      finishedAt: new Date(),
      eventSeq: 1,
    },
  });
  await db.analysisEvent.create({ data: { analysisId: done.id, seq: 1, event: "result", data: { answer: `The ${MARKER} crashes.` } } });
  const insight = await db.entityInsight.create({
    data: { entityId: team.entityId, analysisId: done.id, title: `${MARKER} crashes`, summary: "", sentiment: "negative", confidence: 0.5 },
  });
  await db.insightEvidence.create({ data: { insightId: insight.id, contentId: stored.parent_content_ids[0] as string, quote: MARKER } });
  await db.coverageRecord.create({
    data: { entityId: team.entityId, runId: "r1", collector: "reddit", coverageState: "sampled", query: MARKER },
  });
  const skill = await db.skill.create({ data: { entityId: team.entityId, key: `skill-${MARKER}`, title: `Track the ${MARKER}` } });
  await h.http.post("/api/share-links").set(auth(team.token)).send({ resource: "entity", id: team.entityId }).expect(201);

  // Jobs still working on the entity, one of each kind.
  const collection = await h.http
    .post("/agent/v1/ingest/collection/jobs")
    .set(auth(team.token))
    .send({ entity_id: team.entityId, objective: `Find ${MARKER} talk`, platforms: ["hackernews"], idempotency_key: `c-${randomUUID()}` });
  expect(collection.status, JSON.stringify(collection.body)).toBeLessThan(300);
  jobs.collection = collection.body.job_id;
  jobs.analysis = (
    await db.analysis.create({
      data: {
        userId: team.userId,
        workspaceId: team.workspaceId,
        entityId: team.entityId,
        question: `Is ${MARKER} fixed?`,
        status: "running",
      },
    })
  ).id;
  jobs.run = (
    await db.workflowRun.create({
      data: {
        skillId: skill.id,
        skillKey: skill.key,
        entityId: team.entityId,
        workspaceId: team.workspaceId,
        userId: team.userId,
        idempotencyKey: `run-${randomUUID()}`,
        requestHash: "0".repeat(64),
        scopeHash: "0".repeat(64),
        sourceMode: "saved",
        status: "running",
        maxChargeCredits: 0,
      },
    })
  ).id;
  jobs.sync = (
    await db.noteSync.create({
      data: {
        userId: team.userId,
        entityId: team.entityId,
        requestId: `notes-${randomUUID()}`,
        requestHash: "0".repeat(64),
        status: "queued",
      },
    })
  ).id;
  jobs.sweep = (
    await db.sweepRun.create({
      data: { userId: team.userId, entityId: team.entityId, idempotencyKey: `s-${randomUUID()}`, status: "running", cutoff: new Date() },
    })
  ).id;
  expect(await tablesContaining(h, MARKER)).not.toEqual([]);
}, 60_000);
afterAll(async () => {
  await h?.close();
});

const del = (token: string, id = team.entityId) => h.http.delete(`/api/entities/${id}`).set(auth(token));
const progress = () => h.http.get(`/api/entities/${team.entityId}/deletion`).set(auth(team.token));

describe("DELETE /api/entities/{entity_id}", () => {
  it("is an admin's: an editor and a viewer get 403, a non-member and an unknown id 404, and nothing changes", async () => {
    for (const role of ["viewer", "editor"]) {
      const member = await addMember(h, team, role);
      const res = await del(member.token);
      expect(res.status, role).toBe(403);
      expect(res.body.code).toBe("forbidden");
    }
    const outsider = await createTeam(h, "Globex");
    expect((await del(outsider.token)).status).toBe(404);
    expect((await h.http.get(`/api/entities/${team.entityId}/deletion`).set(auth(outsider.token))).status).toBe(404);
    expect((await del(team.token, randomUUID())).status).toBe(404);
    expect((await del(team.token, "not-a-uuid")).status).toBe(404);
    expect((await progress()).status).toBe(404);
    expect(await h.deps.db.deletionRecord.count()).toBe(0);
  });

  it("cancels its jobs, drains its originals in readable batches, resumes after an interruption and leaves no word behind", async () => {
    const res = await del(admin.token);
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    expect(res.headers.location).toBe(`/api/entities/${team.entityId}/deletion`);
    expect(res.body).toMatchObject({
      entity_id: team.entityId,
      status: "running",
      progress: { jobs_cancelled: 5, originals_matched: 10, remaining: 10, rows_deleted: 0 },
    });
    const db = h.deps.db;
    const statuses = await Promise.all([
      db.collectionJob.findUniqueOrThrow({ where: { id: jobs.collection } }),
      db.analysis.findUniqueOrThrow({ where: { id: jobs.analysis } }),
      db.workflowRun.findUniqueOrThrow({ where: { id: jobs.run } }),
      db.noteSync.findUniqueOrThrow({ where: { id: jobs.sync } }),
      db.sweepRun.findUniqueOrThrow({ where: { id: jobs.sweep } }),
    ]);
    expect(statuses.map((s) => s.status)).toEqual(["cancelled", "cancelled", "cancelled", "cancelled", "cancelled"]);
    // The analysis's stream ended with its cancel, as any cancel ends it.
    const events = await db.analysisEvent.findMany({ where: { analysisId: jobs.analysis } });
    expect(events.at(-1)).toMatchObject({ event: "error", data: { status: "cancelled" } });

    // From now on nothing more is stored for it.
    const refused = await h.http
      .post("/agent/v1/ingest/content")
      .set(auth(team.token))
      .send({ entity_id: team.entityId, sources: [{ platform: "reddit", content: `More ${MARKER}.` }] });
    expect(refused.status, JSON.stringify(refused.body)).toBe(404);

    // One batch (two originals with their comments), then the run stops: its progress reads so.
    expect(await runEntityDeletion(h.deps, res.body.id, { maxBatches: 1 })).toBe(false);
    const partway = (await progress()).body;
    expect(partway).toMatchObject({ status: "running", progress: { batches: 1 } });
    expect(partway.progress.rows_deleted).toBeGreaterThanOrEqual(2);
    expect(partway.progress.remaining).toBe(10 - partway.progress.rows_deleted);

    // Interrupted: the job's last attempt failed. Deleting again resumes it; the job finishes it.
    await markDeletionFailed(h.deps, res.body.id, new Error("the worker stopped"));
    expect((await progress()).body).toMatchObject({ status: "failed", error: "the worker stopped" });
    const again = await del(team.token);
    expect(again.status).toBe(202);
    expect(again.body).toMatchObject({ id: res.body.id, status: "running", error: null });
    h.startWorkers({ "entity.delete.v1": entityDeletionProcessor });
    const done = await waitFor(async () => {
      const body = (await progress()).body;
      return body.status === "completed" ? body : undefined;
    });
    expect(done.progress).toMatchObject({ originals_matched: 10, remaining: 0, rows_deleted: 10 });
    // Two originals a batch, each with the comments below it.
    expect(done.progress.batches).toBeGreaterThanOrEqual(3);
    expect(done.removed).toMatchObject({ analyses: 2, knowledge_records: 1, share_links: 1, detached_entity_ids: [competitorId] });

    // Gone, and so is every word only it held.
    expect((await h.http.get(`/api/entities/${team.entityId}`).set(auth(team.token))).status).toBe(404);
    expect(await tablesContaining(h, MARKER)).toEqual([]);
    expect((await search(h, team.token, MARKER)).results).toEqual([]);

    // The other entity of the workspace is untouched; the competitor stays without its parent.
    expect(await db.content.count({ where: { entityId: otherEntityId } })).toBe(otherContentCount);
    const otherRead = await h.http.get(`/agent/v1/knowledge/insights/${otherRecordId}?entity_id=${otherEntityId}`).set(auth(team.token));
    expect(otherRead.status).toBe(200);
    expect(otherRead.body.resolved_evidence[0]).toMatchObject({ available: true });
    expect(await db.entity.findUniqueOrThrow({ where: { id: competitorId } })).toMatchObject({ parentEntityId: null });

    // Idempotent: deleting again is a 204 (after the same role checks); the deletion stays readable.
    expect((await del(team.token)).status).toBe(204);
    const viewer = await addMember(h, team, "viewer");
    expect((await del(viewer.token)).status).toBe(403);
    expect((await h.http.get(`/api/entities/${team.entityId}/deletion`).set(auth(viewer.token))).body.status).toBe("completed");

    const audit = await h.http.get(`/api/workspaces/${team.workspaceId}/audit`).set(auth(team.token));
    const actions = audit.body.entries.map((e: { action: string }) => e.action);
    expect(actions).toContain("entity.deletion_requested");
    expect(audit.body.entries.find((e: { action: string }) => e.action === "entity.deleted")).toMatchObject({
      target: team.entityId,
      detail: { rows_deleted: 10, jobs_cancelled: 5 },
    });
  }, 60_000);
});
