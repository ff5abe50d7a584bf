import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHarness, type Harness } from "../helpers/harness.js";
import { addMember, auth, createInsight, createTeam, insightBody, knowledgeCounts, reviseInsight, type Team } from "./support.js";

let h: Harness;
let team: Team;
let insightId: string;
let sourceId: string;

beforeAll(async () => {
  h = await createHarness();
  team = await createTeam(h);
  const created = await createInsight(h, team.token, insightBody(team));
  expect(created.status).toBe(201);
  insightId = created.body.record.id;
  sourceId = created.body.record.evidence[0].source_revision_id;
});
afterAll(async () => {
  await h?.close();
});

/** Every read route with the team's ids, scoped by `scope` (a query string). */
const reads = (scope: string) => [
  `/agent/v1/knowledge/insights?${scope}`,
  `/agent/v1/knowledge/insights/${insightId}?${scope}`,
  `/agent/v1/knowledge/insights/${insightId}?${scope}&revision=1`,
  `/agent/v1/knowledge/changes?${scope}`,
  `/agent/v1/knowledge/context?${scope}`,
  `/agent/v1/knowledge/content?${scope}`,
  `/agent/v1/knowledge/content/${team.content.pricing}?${scope}`,
  `/agent/v1/knowledge/sources/${sourceId}?${scope}`,
];

describe("roles", () => {
  it("a viewer reads every route but writes none (403), and nothing is saved", async () => {
    const viewer = await addMember(h, team, "viewer");
    for (const path of reads(`entity_id=${team.entityId}`)) {
      const res = await h.http.get(path).set(auth(viewer.token));
      expect(res.status, `${path}: ${JSON.stringify(res.body)}`).toBe(200);
    }
    const before = await knowledgeCounts(h);
    const create = await createInsight(h, viewer.token, insightBody(team));
    expect(create.status).toBe(403);
    expect(create.body).toEqual({ detail: expect.stringContaining("viewer"), code: "forbidden" });
    const revise = await reviseInsight(h, viewer.token, insightId, insightBody(team, { expected_revision: 1 }));
    expect(revise.status).toBe(403);
    expect(await knowledgeCounts(h)).toEqual(before);
  });

  it("a member who may edit writes, and is the record's actor", async () => {
    const editor = await addMember(h, team, "editor");
    const created = await createInsight(h, editor.token, insightBody(team));
    expect(created.status).toBe(201);
    expect(created.body.record.actor_id).toBe(editor.userId);
    const revised = await reviseInsight(h, team.token, created.body.record.id, insightBody(team, { expected_revision: 1 }));
    expect(revised.status).toBe(200);
    expect(revised.body.record.actor_id).toBe(team.userId);
  });
});

describe("outsiders", () => {
  it("get 404 on every route, for reads and writes, as for ids that do not exist", async () => {
    const stranger = await h.token();
    for (const scope of [`entity_id=${team.entityId}`, `project_id=${team.projectId}`]) {
      for (const path of reads(scope)) {
        const res = await h.http.get(path).set(auth(stranger));
        expect(res.status, path).toBe(404);
        expect(res.body.code).toBe("not_found");
        expect(JSON.stringify(res.body)).not.toContain(team.entityId);
      }
    }
    // Their own entity does not open the team's records either.
    const own = await createTeam(h);
    const byId = reads(`entity_id=${own.entityId}`).filter((path) => /\/(insights|content|sources)\/[^?]+\?/.test(path));
    expect(byId).toHaveLength(4);
    for (const path of byId) {
      const res = await h.http.get(path).set(auth(own.token));
      expect(res.status, path).toBe(404);
    }
    const before = await knowledgeCounts(h);
    expect((await createInsight(h, own.token, insightBody(team))).status).toBe(404);
    expect((await reviseInsight(h, own.token, insightId, insightBody(own, { expected_revision: 1 }))).status).toBe(404);
    // Citing the team's original from the outsider's own entity names no source.
    const cite = await createInsight(
      h,
      own.token,
      insightBody(own, { evidence: [{ content_id: team.content.pricing, quote: "the pricing page is confusing" }] }),
    );
    expect(cite.status).toBe(422);
    expect(cite.body.detail[0].type).toBe("source_not_found");
    const snapshot = await createInsight(
      h,
      own.token,
      insightBody(own, { evidence: [{ source_revision_id: sourceId, quote: "the pricing page is confusing" }] }),
    );
    expect(snapshot.status).toBe(422);
    expect(await knowledgeCounts(h)).toEqual(before);
  });
});

describe("scope", () => {
  it("needs exactly one of entity_id or project_id", async () => {
    const both = await h.http
      .get(`/agent/v1/knowledge/insights?entity_id=${team.entityId}&project_id=${team.projectId}`)
      .set(auth(team.token));
    expect(both.status).toBe(422);
    expect(both.body.detail[0].loc).toEqual(["query", "project_id"]);
    const bothBody = await createInsight(h, team.token, insightBody(team, { project_id: team.projectId }));
    expect(bothBody.status).toBe(422);
    expect(bothBody.body.detail[0].loc).toEqual(["body", "project_id"]);
    for (const path of [
      "/agent/v1/knowledge/insights",
      "/agent/v1/knowledge/changes",
      "/agent/v1/knowledge/context",
      "/agent/v1/knowledge/content",
      `/agent/v1/knowledge/insights/${insightId}`,
    ]) {
      const res = await h.http.get(path).set(auth(team.token));
      expect(res.status, path).toBe(400);
      expect(res.body).toEqual({ detail: expect.any(String), code: "scope_required", accepts: ["entity_id", "project_id"] });
    }
    const none = await createInsight(h, team.token, insightBody(team, { entity_id: undefined }));
    expect(none.status).toBe(400);
    expect(none.body.code).toBe("scope_required");
  });

  it("keeps entity and project records apart; a project's records cite any of its entities' originals", async () => {
    const project = await createInsight(
      h,
      team.token,
      insightBody(team, {
        entity_id: undefined,
        project_id: team.projectId,
        title: "Onboarding compared",
        evidence: [
          { content_id: team.otherContentId, quote: "Globex onboarding is smooth", relation: "contradicts" },
          { content_id: team.content.pricing, quote: "the pricing page is confusing" },
        ],
      }),
    );
    expect(project.status, JSON.stringify(project.body)).toBe(201);
    expect(project.body.record).toMatchObject({ entity_id: null, project_id: team.projectId });
    const id = project.body.record.id;

    const viaProject = await h.http.get(`/agent/v1/knowledge/insights/${id}?project_id=${team.projectId}`).set(auth(team.token));
    expect(viaProject.status).toBe(200);
    const viaEntity = await h.http.get(`/agent/v1/knowledge/insights/${id}?entity_id=${team.entityId}`).set(auth(team.token));
    expect(viaEntity.status).toBe(404);
    const entityList = await h.http.get(`/agent/v1/knowledge/insights?entity_id=${team.entityId}&limit=100`).set(auth(team.token));
    expect(entityList.body.insights.map((r: { id: string }) => r.id)).not.toContain(id);
    const projectList = await h.http.get(`/agent/v1/knowledge/insights?project_id=${team.projectId}`).set(auth(team.token));
    expect(projectList.body.insights.map((r: { id: string }) => r.id)).toEqual([id]);

    // An entity's record may not cite another entity's original, even in the same project.
    const cross = await createInsight(
      h,
      team.token,
      insightBody(team, { evidence: [{ content_id: team.otherContentId, quote: "Globex onboarding is smooth" }] }),
    );
    expect(cross.status).toBe(422);
    expect(cross.body.detail[0]).toMatchObject({ loc: ["body", "evidence", 0, "content_id"], type: "source_not_found" });
    // Nor read the competitor's snapshot through the company entity.
    const otherSnapshot = project.body.record.evidence[0].source_revision_id;
    const res = await h.http.get(`/agent/v1/knowledge/sources/${otherSnapshot}?entity_id=${team.entityId}`).set(auth(team.token));
    expect(res.status).toBe(404);
    const ok = await h.http.get(`/agent/v1/knowledge/sources/${otherSnapshot}?entity_id=${team.otherEntityId}`).set(auth(team.token));
    expect(ok.status).toBe(200);
    // The feed of each scope holds only its own records.
    const feed = await h.http.get(`/agent/v1/knowledge/changes?project_id=${team.projectId}`).set(auth(team.token));
    expect(feed.body.events.map((e: { insight_id: string }) => e.insight_id)).toEqual([id]);
  });

  it("answers 404 for unknown or malformed ids", async () => {
    for (const path of [
      `/agent/v1/knowledge/insights/${randomUUID()}?entity_id=${team.entityId}`,
      `/agent/v1/knowledge/insights/not-a-uuid?entity_id=${team.entityId}`,
      `/agent/v1/knowledge/content/${randomUUID()}?entity_id=${team.entityId}`,
      `/agent/v1/knowledge/sources/${randomUUID()}`,
      `/agent/v1/knowledge/insights?entity_id=${randomUUID()}`,
      `/agent/v1/knowledge/insights?project_id=nope`,
    ]) {
      const res = await h.http.get(path).set(auth(team.token));
      expect(res.status, path).toBe(404);
      expect(res.body.code).toBe("not_found");
    }
  });
});
