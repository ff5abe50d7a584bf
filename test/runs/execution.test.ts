import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { processors } from "../../workers/processors.js";
import type { WorkerHandles } from "../../workers/runtime.js";
import { workflowRunProcessor } from "../../workers/workflow-run.js";
import { type Fake, hackernewsFake, hnStories } from "../collection/fakes.js";
import { until } from "../collection/support.js";
import { createHarness, type Harness, randomId } from "../helpers/harness.js";
import { expectAllLedgersConsistent, expectLedgerConsistent, onboardCompany } from "./helpers.js";

let h: Harness;
let hn: Fake;
let workers: WorkerHandles;
beforeAll(async () => {
  const stories = hnStories(6, "acme");
  hn = await hackernewsFake(() => stories);
  h = await createHarness({ HACKERNEWS_API_URL: `${hn.url}/api/v1`, COLLECTOR_MAX_PAGES: "2" });
  workers = h.startWorkers({ ...processors, "workflow.run.v1": workflowRunProcessor }, 4);
});
afterEach(() => expectAllLedgersConsistent(h));
afterAll(async () => {
  await h.close();
  await hn.close();
});

const auth = (token: string) => ({ Authorization: `Bearer ${token}` });

async function approveAndRun(ctx: Awaited<ReturnType<typeof onboardCompany>>, sourceMode: "refresh" | "saved", skillIndex = 0) {
  const skillId = ctx.skills[skillIndex]!.id;
  const quote = await h.http.get(`/api/entities/${ctx.entityId}/skills/${skillId}/quote?source_mode=${sourceMode}`).set(auth(ctx.token));
  expect(quote.status).toBe(200);
  const run = await h.http
    .post(`/api/entities/${ctx.entityId}/skills/${skillId}/runs`)
    .set(auth(ctx.token))
    .set("Idempotency-Key", randomId("exec-"))
    .send({ scope_hash: quote.body.scope_hash, max_charge_credits: quote.body.max_charge_credits });
  expect(run.status).toBe(202);
  const finished = await until(async () => {
    const res = await h.http.get(run.body.links.self).set(auth(ctx.token));
    return ["completed", "failed", "blocked"].includes(res.body.status) ? res.body : undefined;
  }, 60_000);
  return { quote: quote.body, run: finished };
}

describe("workflow run execution and settlement", { timeout: 90_000 }, () => {
  it("refresh: collects, analyses, and charges the actual cost within the approved maximum", async () => {
    const ctx = await onboardCompany(h, { platforms: ["hackernews"], credits: 1000 });
    const { quote, run } = await approveAndRun(ctx, "refresh");
    expect(run.status, JSON.stringify(run)).toBe("completed");
    expect(run.collection_job_id).toEqual(expect.any(String));
    expect(run.analysis_id).toEqual(expect.any(String));
    expect(run.charged_credits).toBeGreaterThan(0);
    expect(run.charged_credits).toBeLessThanOrEqual(quote.max_charge_credits);
    const job = await h.deps.db.collectionJob.findUniqueOrThrow({ where: { id: run.collection_job_id } });
    expect(job.collectionOnly).toBe(true);
    expect(await h.deps.db.content.count({ where: { entityId: ctx.entityId, platform: "hackernews" } })).toBeGreaterThan(0);
    const analysis = await h.deps.db.analysis.findUniqueOrThrow({ where: { id: run.analysis_id } });
    expect(["completed", "partial"]).toContain(analysis.status);
    const balance = await expectLedgerConsistent(h, ctx.workspaceId);
    expect(balance).toBe(1000 - run.charged_credits);
    const kinds = (await h.deps.db.creditLedger.findMany({ where: { runId: run.id }, orderBy: { id: "asc" } })).map((e) => e.kind);
    expect(kinds).toEqual(["reserve", "release", "settle"]);
  });

  it("saved: analyses stored evidence without collecting", async () => {
    const ctx = await onboardCompany(h, { platforms: ["hackernews"], credits: 500 });
    const ingest = await h.http
      .post("/agent/v1/ingest/content")
      .set(auth(ctx.token))
      .send({
        entity_id: ctx.entityId,
        sources: [
          { platform: "hackernews", id: "s1", content: "Acme feature 1 is fast and developers love the new dashboard." },
          { platform: "hackernews", id: "s2", content: "Developers say Acme feature 1 breaks on large projects, which is frustrating." },
        ],
      });
    expect(ingest.status).toBe(200);
    const { quote, run } = await approveAndRun(ctx, "saved");
    expect(run.status).toBe("completed");
    expect(run.collection_job_id).toBeNull();
    expect(run.charged_credits).toBeLessThanOrEqual(quote.max_charge_credits);
    expect(run.charged_credits).toBeLessThan(quote.estimated_credits);
    expect(await expectLedgerConsistent(h, ctx.workspaceId)).toBe(500 - run.charged_credits);
  });

  it("charges nothing when every platform is blocked", async () => {
    const ctx = await onboardCompany(h, { platforms: ["twitter"], credits: 300 });
    const { run } = await approveAndRun(ctx, "refresh");
    expect(run.status).toBe("blocked");
    expect(run.charged_credits).toBe(0);
    expect(run.error).toMatch(/twitter/);
    expect(await expectLedgerConsistent(h, ctx.workspaceId)).toBe(300);
  });

  it("charges nothing when the run fails, and releases the reservation", async () => {
    const ctx = await onboardCompany(h, { platforms: ["hackernews"], credits: 300 });
    const skillId = ctx.skills[1]!.id;
    const quote = await h.http.get(`/api/entities/${ctx.entityId}/skills/${skillId}/quote?source_mode=saved`).set(auth(ctx.token));
    // The run's analysis is cancelled before it runs: the run cannot succeed.
    // No analysis worker runs until the analysis is cancelled (a paused worker may still take the job it was fetching).
    await workers.workers.find((w) => w.name === "analysis")!.close();
    const run = await h.http
      .post(`/api/entities/${ctx.entityId}/skills/${skillId}/runs`)
      .set(auth(ctx.token))
      .set("Idempotency-Key", randomId("fail-"))
      .send({ scope_hash: quote.body.scope_hash, max_charge_credits: quote.body.max_charge_credits });
    expect(run.status).toBe(202);
    const analysisId = await until(async () => {
      const row = await h.deps.db.workflowRun.findUniqueOrThrow({ where: { id: run.body.id } });
      return row.analysisId ?? undefined;
    }, 30_000);
    await h.http.post(`/agent/v1/analysis/${analysisId}/cancel`).set(auth(ctx.token)).expect(200);
    h.startWorkers({ "analysis.run.v1": processors["analysis.run.v1"] });
    const finished = await until(async () => {
      const row = await h.deps.db.workflowRun.findUniqueOrThrow({ where: { id: run.body.id } });
      return ["completed", "failed", "blocked"].includes(row.status) ? row : undefined;
    }, 60_000);
    expect(finished.status).toBe("failed");
    expect(finished.chargedCredits).toBe(0);
    expect(await expectLedgerConsistent(h, ctx.workspaceId)).toBe(300);
  });
});
