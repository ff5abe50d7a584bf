import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runProjectDeletion } from "../../src/governance/deletion/project-run.js";
import { markDeletionFailed } from "../../src/governance/deletion/resumable.js";
import { projectDeletionProcessor } from "../../workers/project-deletion.js";
import { waitFor } from "../analysis/fixtures.js";
import { createHarness, type Harness } from "../helpers/harness.js";
import { addMember, auth, createTeam, enrich, ingest, search, type Team, tablesContaining } from "./support.js";

/**
 * Deleting a project (DELETE /api/projects/{project_id}, admins): each of its entities goes through the entity
 * deletion (originals in batches of 2 here, resumable), then one transaction removes the project's analyses,
 * its knowledge records and share links to them, and the project; a user's page that named it stays, detached.
 * A word only the project held (its name, its entities, originals, analysis, record and skill) is then in no
 * column of any table; the workspace's other project is untouched.
 */
const MARKER = "vornakelith";

let h: Harness;
let team: Team;
let admin: { token: string; userId: string };
let projectId: string;
let entityIds: string[];
let analysisId: string;
let runningAnalysisId: string;
let recordId: string;
let pageId: string;
let otherRecordId: string;
let otherContentCount: number;
let originals: number;

beforeAll(async () => {
  h = await createHarness({ ERASURE_BATCH_SIZE: "2", DELETION_PAUSE_FACTOR: "0" });
  team = await createTeam(h);
  admin = await addMember(h, team, "admin");
  const db = h.deps.db;

  // A second project of the workspace: a company and a product, with a research objective.
  const onboarding = await h.http
    .post("/api/entities/onboarding")
    .set(auth(team.token))
    .send({
      request_id: randomUUID(),
      workspace_id: team.workspaceId,
      company: { name: `Zeta ${MARKER}` },
      products: [{ name: `${MARKER} app` }],
      research_objectives: [{ title: `Track the ${MARKER}`, question: `What do people say about ${MARKER}?` }],
    });
  expect(onboarding.status, JSON.stringify(onboarding.body)).toBe(201);
  projectId = onboarding.body.project_id;
  entityIds = onboarding.body.entity_ids;
  expect(entityIds).toHaveLength(2);

  const stored = [];
  for (const [n, entityId] of entityIds.entries()) {
    stored.push(
      await ingest(
        h,
        team.token,
        entityId as string,
        Array.from({ length: 2 }, (_, i) => ({
          id: `src-${n}-${i}-${randomUUID()}`,
          platform: "reddit",
          title: `The ${MARKER} thread ${n}.${i}`,
          author: `author_${MARKER}_${n}`,
          content: `The ${MARKER} sync keeps failing and the ${MARKER} is slow (${n}.${i}).`,
          comments: [{ author: "replier", text: `Same here, ${MARKER} fails (${n}.${i}).` }],
        })),
      ),
    );
  }
  const kept = await ingest(h, team.token, team.entityId, [
    { platform: "reddit", author: "carol", content: "The export keeps crashing on large files." },
  ]);
  await enrich(h, [...stored.flatMap((s) => s.content_ids), ...kept.content_ids]);
  originals = await db.content.count({ where: { entityId: { in: entityIds } } });
  expect(originals).toBe(8);
  otherContentCount = await db.content.count({ where: { entityId: team.entityId } });
  const quoted = stored[0]?.parent_content_ids[0] as string;

  // A knowledge record of the project, citing one of its originals; one of the other project's entity.
  const record = await h.http
    .post("/agent/v1/knowledge/insights")
    .set(auth(team.token))
    .send({
      project_id: projectId,
      request_id: randomUUID(),
      expected_revision: 0,
      title: `The ${MARKER} sync fails`,
      summary: `People say the ${MARKER} sync fails.`,
      evidence: [{ content_id: quoted, quote: `The ${MARKER} sync keeps failing` }],
    });
  expect(record.status, JSON.stringify(record.body)).toBe(201);
  recordId = record.body.record.id;
  const otherRecord = await h.http
    .post("/agent/v1/knowledge/insights")
    .set(auth(team.token))
    .send({
      entity_id: team.entityId,
      request_id: randomUUID(),
      expected_revision: 0,
      title: "Exports crash",
      summary: "Large files crash the export.",
      evidence: [{ content_id: kept.parent_content_ids[0], quote: "The export keeps crashing" }],
    });
  expect(otherRecord.status, JSON.stringify(otherRecord.body)).toBe(201);
  otherRecordId = otherRecord.body.record.id;

  // A finished analysis of the project (no entity of its own) with its event and insight, shared by a link.
  const done = await db.analysis.create({
    data: {
      userId: team.userId,
      workspaceId: team.workspaceId,
      projectId,
      question: `What about the ${MARKER}?`,
      status: "completed",
      result: { data: { answer: `The ${MARKER} sync fails [1].` } },
      finishedAt: new Date(),
      eventSeq: 1,
    },
  });
  analysisId = done.id;
  await db.analysisEvent.create({ data: { analysisId, seq: 1, event: "result", data: { answer: `The ${MARKER} fails.` } } });
  const insight = await db.entityInsight.create({
    data: { analysisId, title: `${MARKER} fails`, summary: "", sentiment: "negative", confidence: 0.5 },
  });
  await db.insightEvidence.create({ data: { insightId: insight.id, contentId: quoted, quote: MARKER } });
  const link = await h.http.post("/api/share-links").set(auth(team.token)).send({ resource: "analysis", id: analysisId });
  expect(link.status, JSON.stringify(link.body)).toBe(201);
  // An analysis of the project still running: the request cancels it.
  runningAnalysisId = (
    await db.analysis.create({
      data: { userId: team.userId, workspaceId: team.workspaceId, projectId, question: `Is ${MARKER} fixed?`, status: "running" },
    })
  ).id;

  // The owner's saved page filed under the project: the user's own words, kept without the project.
  const page = await h.http
    .post("/agent/v1/context/save")
    .set(auth(team.token))
    .send({ title: "Launch notes", content: "Notes for the launch review.", project_id: projectId });
  expect(page.status, JSON.stringify(page.body)).toBeLessThan(300);
  pageId = page.body.id;
  expect(await tablesContaining(h, MARKER)).not.toEqual([]);
}, 60_000);
afterAll(async () => {
  await h?.close();
});

const del = (token: string, id = projectId) => h.http.delete(`/api/projects/${id}`).set(auth(token));
const progress = (token = team.token) => h.http.get(`/api/projects/${projectId}/deletion`).set(auth(token));

describe("DELETE /api/projects/{project_id}", () => {
  it("is an admin's: an editor and a viewer get 403, a non-member, an unknown and a malformed id 404, and nothing changes", async () => {
    for (const role of ["viewer", "editor"]) {
      const member = await addMember(h, team, role);
      const res = await del(member.token);
      expect(res.status, role).toBe(403);
      expect(res.body.code).toBe("forbidden");
    }
    const outsider = await createTeam(h, "Globex");
    const foreign = await del(outsider.token);
    expect(foreign.status).toBe(404);
    expect(foreign.body).toEqual({ detail: "Project was not found.", code: "not_found" });
    expect((await progress(outsider.token)).status).toBe(404);
    expect((await del(team.token, randomUUID())).status).toBe(404);
    const malformed = await del(team.token, "not-a-uuid");
    expect(malformed.status).toBe(404);
    expect(malformed.body.code).toBe("not_found");
    expect((await progress()).status).toBe(404);
    expect(await h.deps.db.deletionRecord.count()).toBe(0);
    expect(await h.deps.db.project.count({ where: { id: projectId } })).toBe(1);
  });

  it("deletes every entity through the entity deletion, resumes after an interruption, then the project, leaving no word behind", async () => {
    const res = await del(admin.token);
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    expect(res.headers.location).toBe(`/api/projects/${projectId}/deletion`);
    expect(res.body).toMatchObject({
      project_id: projectId,
      workspace_id: team.workspaceId,
      status: "running",
      requested_by: admin.userId,
      progress: { jobs_cancelled: 1, entities_matched: 2, entities_remaining: 2, originals_matched: originals, remaining: originals },
    });
    expect(res.body.entities.map((e: { entity_id: string }) => e.entity_id).sort()).toEqual([...entityIds].sort());
    const db = h.deps.db;
    expect(await db.analysis.findUniqueOrThrow({ where: { id: runningAnalysisId } })).toMatchObject({ status: "cancelled" });

    // From now on nothing is stored for its entities, and nothing new can name the project.
    const refused = await h.http
      .post("/agent/v1/ingest/content")
      .set(auth(team.token))
      .send({ entity_id: entityIds[0], sources: [{ platform: "reddit", content: `More ${MARKER}.` }] });
    expect(refused.status, JSON.stringify(refused.body)).toBe(404);
    const joined = await h.http.post("/api/entities").set(auth(team.token)).send({ name: "Late", project_id: projectId });
    expect(joined.status, JSON.stringify(joined.body)).toBe(404);
    expect(joined.body).toEqual({ detail: "Project was not found.", code: "not_found" });
    const moved = await h.http.patch(`/api/entities/${team.entityId}`).set(auth(team.token)).send({ project_id: projectId });
    expect(moved.status, JSON.stringify(moved.body)).toBe(404);

    // One batch of the first entity, then the run stops: its progress reads so.
    expect(await runProjectDeletion(h.deps, res.body.id, { maxBatches: 1 })).toBe(false);
    const partway = (await progress()).body;
    expect(partway).toMatchObject({ status: "running", progress: { batches: 1, entities_remaining: 2 } });
    expect(partway.progress.rows_deleted).toBeGreaterThanOrEqual(2);
    expect(partway.progress.remaining).toBe(originals - partway.progress.rows_deleted);

    // Interrupted: the job's last attempt failed. Deleting again resumes it; the job finishes it.
    await markDeletionFailed(h.deps, res.body.id, new Error("the worker stopped"));
    expect((await progress()).body).toMatchObject({ status: "failed", error: "the worker stopped" });
    const again = await del(team.token);
    expect(again.status).toBe(202);
    expect(again.body).toMatchObject({ id: res.body.id, status: "running", error: null });
    h.startWorkers({ "project.delete.v1": projectDeletionProcessor });
    const done = await waitFor(async () => {
      const body = (await progress()).body;
      return body.status === "completed" ? body : undefined;
    });
    expect(done.progress).toMatchObject({
      entities_matched: 2,
      entities_remaining: 0,
      originals_matched: originals,
      remaining: 0,
      rows_deleted: originals,
    });
    expect(done.entities.map((e: { status: string }) => e.status)).toEqual(["completed", "completed"]);
    expect(done.removed).toMatchObject({
      entities: 2,
      analyses: 2,
      knowledge_records: 1,
      share_links: 1,
      onboarding_requests: 1,
      pages_detached: 1,
    });

    // Gone: its entities, their originals, its analyses and records, the project.
    expect(await db.project.count({ where: { id: projectId } })).toBe(0);
    expect(await db.entity.count({ where: { id: { in: entityIds } } })).toBe(0);
    expect(await db.content.count({ where: { entityId: { in: entityIds } } })).toBe(0);
    expect(await db.analysis.count({ where: { OR: [{ projectId }, { entityId: { in: entityIds } }] } })).toBe(0);
    expect(await db.knowledgeInsight.count({ where: { OR: [{ projectId }, { entityId: { in: entityIds } }] } })).toBe(0);
    expect(await db.knowledgeInsight.count({ where: { id: recordId } })).toBe(0);
    expect(await db.shareLink.count({ where: { resourceId: analysisId } })).toBe(0);
    for (const entityId of entityIds) {
      expect((await h.http.get(`/api/entities/${entityId}`).set(auth(team.token))).status).toBe(404);
      // Each entity's own deletion reads completed, as if it had been deleted alone.
      expect((await h.http.get(`/api/entities/${entityId}/deletion`).set(auth(team.token))).body.status).toBe("completed");
    }
    expect(await tablesContaining(h, MARKER)).toEqual([]);
    expect((await search(h, team.token, MARKER)).results).toEqual([]);

    // The user's page stays, without the project; the workspace's other project is untouched.
    expect(await db.page.findUniqueOrThrow({ where: { id: pageId } })).toMatchObject({ projectId: null });
    expect(await db.content.count({ where: { entityId: team.entityId } })).toBe(otherContentCount);
    const otherRead = await h.http.get(`/agent/v1/knowledge/insights/${otherRecordId}?entity_id=${team.entityId}`).set(auth(team.token));
    expect(otherRead.status).toBe(200);
    expect(otherRead.body.resolved_evidence[0]).toMatchObject({ available: true });

    // Idempotent: deleting again is a 204 (after the same role and tenancy checks); the deletion stays readable.
    expect((await del(team.token)).status).toBe(204);
    const viewer = await addMember(h, team, "viewer");
    expect((await del(viewer.token)).status).toBe(403);
    expect((await progress(viewer.token)).body.status).toBe("completed");
    const outsider = await createTeam(h, "Initech");
    expect((await del(outsider.token)).status).toBe(404);

    const audit = await h.http.get(`/api/workspaces/${team.workspaceId}/audit`).set(auth(team.token));
    const entries = audit.body.entries as { action: string; target: string; detail: Record<string, unknown> }[];
    expect(entries.find((e) => e.action === "project.deletion_requested")).toMatchObject({
      target: projectId,
      detail: { deletion_id: res.body.id, originals_matched: originals },
    });
    expect(
      entries
        .filter((e) => e.action === "entity.deleted")
        .map((e) => e.target)
        .sort(),
    ).toEqual([...entityIds].sort());
    const deleted = entries.find((e) => e.action === "project.deleted");
    expect(deleted).toMatchObject({
      target: projectId,
      detail: { deletion_id: res.body.id, rows_deleted: originals, removed: { analyses: 2, knowledge_records: 1 } },
    });
    expect([...((deleted?.detail.entity_ids ?? []) as string[])].sort()).toEqual([...entityIds].sort());
  }, 60_000);
});
