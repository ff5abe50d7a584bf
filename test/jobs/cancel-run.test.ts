import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { analysisJobId } from "../../src/insights/analysis/jobs.js";
import { price, type RunScope } from "../../src/workflows/billing/pricing.js";
import { runJobId } from "../../src/workflows/runs/service.js";
import { analysisProcessor } from "../../workers/analysis.js";
import { processors } from "../../workers/processors.js";
import type { WorkerHandles } from "../../workers/runtime.js";
import { workflowRunProcessor } from "../../workers/workflow-run.js";
import { type Fake, hackernewsFake, hnStories } from "../collection/fakes.js";
import { bearer, contentRows, until } from "../collection/support.js";
import { createHarness, type Harness, randomId } from "../helpers/harness.js";
import { expectAllLedgersConsistent, expectLedgerConsistent, onboardCompany } from "../runs/helpers.js";
import { expectEndedConflict, gate, trackEnds } from "./support.js";

/**
 * Cancelling workflow runs on real PostgreSQL, Redis and BullMQ workers. A run's collection
 * child is made to sit mid-run (the HN fake holds page 1); its analysis child is made to wait
 * in the queue (no analysis worker runs). The cancel settles the run `cancelled`, charging only
 * the platforms of a finished collection, releases the rest of the reservation and cancels the
 * live child, which stops within 2 s.
 */
const PAGE = 3;
let h: Harness;
let hn: Fake;
/** "held": nine stories, page 1 held until the gate opens; "quick": one page. */
let mode: "held" | "quick" = "held";
const held = gate();
let main: WorkerHandles;
let analysis: WorkerHandles | undefined;
let tracker: ReturnType<typeof trackEnds>;
const { "analysis.run.v1": _analysis, ...withoutAnalysis } = { ...processors, "workflow.run.v1": workflowRunProcessor };

beforeAll(async () => {
  hn = await hackernewsFake(() => (mode === "held" ? hnStories(9, "run") : hnStories(2, "quick")));
  hn.intercept(async (req) => {
    if (mode === "held" && req.path === "/api/v1/search" && req.query.get("page") === "1") await held.wait();
    return undefined;
  });
  h = await createHarness({
    HACKERNEWS_API_URL: `${hn.url}/api/v1`,
    COLLECTOR_PAGE_SIZE: String(PAGE),
    COLLECTOR_MAX_PAGES: "5",
    COLLECTOR_MAX_COMMENTS: "0",
    COLLECTOR_REQUESTS_PER_SECOND: "1000",
    COLLECTOR_TIMEOUT_MS: "30000",
  });
  main = h.startWorkers(withoutAnalysis, 4);
  tracker = trackEnds(main);
});
afterEach(() => expectAllLedgersConsistent(h));
afterAll(async () => {
  held.open();
  await h?.close();
  await hn?.close();
});

type Ctx = Awaited<ReturnType<typeof onboardCompany>>;
const runsPath = (ctx: Ctx) => `/api/entities/${ctx.entityId}/skills/${ctx.skills[0]!.id}/runs`;
const cancel = (ctx: Ctx, runId: string, token = ctx.token) => h.http.post(`${runsPath(ctx)}/${runId}/cancel`).set(bearer(token));

async function approve(ctx: Ctx) {
  const quote = await h.http
    .get(`/api/entities/${ctx.entityId}/skills/${ctx.skills[0]!.id}/quote?source_mode=refresh`)
    .set(bearer(ctx.token));
  expect(quote.status).toBe(200);
  const run = await h.http
    .post(runsPath(ctx))
    .set(bearer(ctx.token))
    .set("Idempotency-Key", randomId("cancel-"))
    .send({ scope_hash: quote.body.scope_hash, max_charge_credits: quote.body.max_charge_credits });
  expect(run.status, JSON.stringify(run.body)).toBe(202);
  return { runId: run.body.id as string, max: quote.body.max_charge_credits as number };
}

const runRow = (id: string) => h.deps.db.workflowRun.findUniqueOrThrow({ where: { id } });
const ledgerKinds = async (runId: string) =>
  (await h.deps.db.creditLedger.findMany({ where: { runId }, orderBy: { id: "asc" } })).map((e) => e.kind);

describe("cancelling a workflow run", { timeout: 45_000 }, () => {
  it("while its collection runs: settles at no charge, releases the reservation and stops the collection within 2 s", async () => {
    mode = "held";
    const ctx = await onboardCompany(h, { platforms: ["hackernews"], credits: 1000 });
    const { runId, max } = await approve(ctx);
    // The run started its collection child and ended its own job; the child waits on page 1.
    const jobId = await until(async () => (await runRow(runId)).collectionJobId ?? undefined);
    await until(async () => {
      const job = await h.deps.db.collectionJob.findUniqueOrThrow({ where: { id: jobId } });
      return ((job.progress as Record<string, { pages?: number }>).hackernews?.pages ?? 0) >= 1 && held.state.waiting > 0;
    });
    const child = await h.deps.db.collectionJob.findUniqueOrThrow({ where: { id: jobId } });
    expect(child.status).toBe("running");
    expect((await runRow(runId)).status).toBe("running");

    const startedAt = Date.now();
    const res = await cancel(ctx, runId);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ id: runId, status: "cancelled", charged_credits: 0, collection_job_id: jobId });
    await until(async () => (await h.deps.db.collectionJob.findUniqueOrThrow({ where: { id: jobId } })).status === "cancelled");
    expect(Date.now() - startedAt).toBeLessThan(2000);
    const end = await tracker.endOf(child.queueJobId, 5000);
    expect(end.value).toMatchObject({ status: "cancelled" });
    expect(end.at - startedAt).toBeLessThan(2000);

    // What the collection stored before the cancel stays; nothing is charged for it (it did not finish).
    expect(await contentRows(h, ctx.entityId, "hackernews")).toHaveLength(PAGE);
    const run = await runRow(runId);
    expect(run).toMatchObject({ status: "cancelled", chargedCredits: 0, analysisId: null });
    expect(run.chargedCredits).toBeLessThanOrEqual(max);
    expect(await ledgerKinds(runId)).toEqual(["reserve", "release"]);
    expect(await expectLedgerConsistent(h, ctx.workspaceId)).toBe(1000);
    // The child's end did not continue the cancelled run.
    expect(await h.deps.db.analysis.count({ where: { requestId: `workflow-run:${runId}` } })).toBe(0);
    expect((await h.http.get(`${runsPath(ctx)}/${runId}`).set(bearer(ctx.token))).body.status).toBe("cancelled");
  });

  it("while its analysis waits: charges the finished collection only and cancels the analysis", async () => {
    mode = "quick";
    const ctx = await onboardCompany(h, { platforms: ["hackernews"], credits: 1000 });
    const { runId, max } = await approve(ctx);
    // The collection finished and the run queued its analysis, which no worker takes.
    const analysisId = await until(async () => (await runRow(runId)).analysisId ?? undefined, 20_000);
    const row = await runRow(runId);
    expect((await h.deps.db.collectionJob.findUniqueOrThrow({ where: { id: row.collectionJobId! } })).status).toBe("completed");
    const queue = h.deps.queues.get("analysis");
    expect(await queue.getJobState(analysisJobId(analysisId))).toBe("waiting");

    const res = await cancel(ctx, runId);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const expected = Math.min(price(row.scope as unknown as RunScope, { platforms: 1, sources: 0 }).credits, max);
    expect(expected).toBeGreaterThan(0);
    expect(res.body).toMatchObject({ status: "cancelled", charged_credits: expected, analysis_id: analysisId });
    expect(res.body.charged_credits).toBeLessThanOrEqual(max);
    expect((await h.deps.db.analysis.findUniqueOrThrow({ where: { id: analysisId } })).status).toBe("cancelled");
    expect(await queue.getJob(analysisJobId(analysisId))).toBeUndefined();
    expect(await ledgerKinds(runId)).toEqual(["reserve", "release", "settle"]);
    expect(await expectLedgerConsistent(h, ctx.workspaceId)).toBe(1000 - expected);
  });

  it("answers a second cancel the same, hides the run from other users, and refuses a finished run", async () => {
    mode = "held";
    const ctx = await onboardCompany(h, { platforms: ["hackernews"], credits: 1000 });
    const { runId } = await approve(ctx);
    await until(async () => (await runRow(runId)).collectionJobId ?? undefined);
    const first = await cancel(ctx, runId);
    expect(first.status).toBe(200);
    const again = await cancel(ctx, runId);
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    const stranger = await h.token();
    expect((await cancel(ctx, runId, stranger)).status).toBe(404);
    expect((await cancel(ctx, "00000000-0000-4000-8000-000000000000")).status).toBe(404);

    // A run that ran to the end.
    mode = "quick";
    analysis = h.startWorkers({ "analysis.run.v1": analysisProcessor });
    const done = await approve(ctx);
    const finished = await until(async () => {
      const run = await runRow(done.runId);
      return ["completed", "failed", "blocked"].includes(run.status) ? run : undefined;
    }, 30_000);
    expect(finished.status).toBe("completed");
    expectEndedConflict(await cancel(ctx, done.runId), "completed");
    expect((await runRow(done.runId)).chargedCredits).toBe(finished.chargedCredits);
    await analysis.close();
  });

  it("removes a queued run from the queue; it never runs once a worker starts", async () => {
    mode = "quick";
    const ctx = await onboardCompany(h, { platforms: ["hackernews"], credits: 1000 });
    await main.close();
    const { runId } = await approve(ctx);
    const queue = h.deps.queues.get("workflow-run");
    expect(await queue.getJobState(runJobId(runId))).toBe("waiting");

    const res = await cancel(ctx, runId);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: "cancelled", charged_credits: 0, collection_job_id: null });
    expect(await queue.getJob(runJobId(runId))).toBeUndefined();
    expect(await expectLedgerConsistent(h, ctx.workspaceId)).toBe(1000);

    // Workers start and finish a later run; the cancelled one never started a child.
    main = h.startWorkers(withoutAnalysis, 4);
    analysis = h.startWorkers({ "analysis.run.v1": analysisProcessor });
    const later = await approve(ctx);
    await until(async () => (await runRow(later.runId)).status === "completed" || undefined, 30_000);
    expect(await runRow(runId)).toMatchObject({ status: "cancelled", collectionJobId: null, analysisId: null, chargedCredits: 0 });
  });
});
