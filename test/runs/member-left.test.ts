import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { processors } from "../../workers/processors.js";
import { workflowRunProcessor } from "../../workers/workflow-run.js";
import { type Fake, hackernewsFake, hnStories } from "../collection/fakes.js";
import { until } from "../collection/support.js";
import { createHarness, type Harness, randomId } from "../helpers/harness.js";
import { onboardCompany } from "./helpers.js";

/**
 * Removal ends a member's access at once, but not their running work: a workflow run an editor
 * started goes on through its collection and analysis steps after the editor left the workspace
 * (the steps were authorised when the run was approved), and the rest of the team reads it.
 */
let h: Harness;
let hn: Fake;
beforeAll(async () => {
  const stories = hnStories(4, "acme");
  hn = await hackernewsFake(() => stories);
  h = await createHarness({ HACKERNEWS_API_URL: `${hn.url}/api/v1`, COLLECTOR_MAX_PAGES: "1" });
});
afterAll(async () => {
  await h.close();
  await hn.close();
});

const auth = (token: string) => ({ Authorization: `Bearer ${token}` });

describe("a member who leaves", { timeout: 90_000 }, () => {
  it("loses access at once while the run they started finishes", async () => {
    const ctx = await onboardCompany(h, { platforms: ["hackernews"], credits: 1000 });
    const editorSub = randomId("editor-");
    const editor = await h.token(editorSub);
    await h.http.get("/agent/v1/connection").set(auth(editor)).expect(200);
    const editorId = (await h.deps.db.user.findUniqueOrThrow({ where: { sub: editorSub } })).id;
    const member = await h.http
      .post(`/api/workspaces/${ctx.workspaceId}/members`)
      .set(auth(ctx.token))
      .send({ user_id: editorId, role: "editor" })
      .expect(201);

    // The editor approves a refresh run; no worker runs yet.
    const skillId = ctx.skills[0]?.id as string;
    const quote = await h.http
      .get(`/api/entities/${ctx.entityId}/skills/${skillId}/quote?source_mode=refresh`)
      .set(auth(editor))
      .expect(200);
    const started = await h.http
      .post(`/api/entities/${ctx.entityId}/skills/${skillId}/runs`)
      .set(auth(editor))
      .set("Idempotency-Key", randomId("left-"))
      .send({ scope_hash: quote.body.scope_hash, max_charge_credits: quote.body.max_charge_credits });
    expect(started.status).toBe(202);

    // Removed: the next request of theirs is a 404, as for a stranger.
    await h.http.delete(`/api/workspaces/${ctx.workspaceId}/members/${member.body.id}`).set(auth(ctx.token)).expect(204);
    expect((await h.http.get(started.body.links.self).set(auth(editor))).status).toBe(404);

    // The workers start: the run collects and analyses as its starter all the same.
    h.startWorkers({ ...processors, "workflow.run.v1": workflowRunProcessor }, 4);
    const finished = await until(async () => {
      const res = await h.http.get(started.body.links.self).set(auth(ctx.token));
      return ["completed", "failed", "blocked"].includes(res.body.status) ? res.body : undefined;
    }, 60_000);
    expect(finished.status, JSON.stringify(finished)).toBe("completed");
    const job = await h.deps.db.collectionJob.findUniqueOrThrow({ where: { id: finished.collection_job_id } });
    expect(job.userId).toBe(editorId);
    const analysis = await h.deps.db.analysis.findUniqueOrThrow({ where: { id: finished.analysis_id } });
    expect(["completed", "partial"]).toContain(analysis.status);
    // The owner reads the analysis the departed editor's run made.
    expect((await h.http.get(`/agent/v1/analysis/${analysis.id}`).set(auth(ctx.token))).status).toBe(200);
  });
});
