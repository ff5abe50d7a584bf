import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runAdminCommand } from "../../src/governance/admin/commands.js";
import { analysisJobId, enqueueAnalysis } from "../../src/insights/analysis/jobs.js";
import { startAnalysis } from "../../src/insights/analysis/service.js";
import { deleteKeys } from "../../src/platform/redis.js";
import { processors } from "../../workers/processors.js";
import { type Fake, hackernewsFake, hnStories } from "../collection/fakes.js";
import { bearer, createJob, until } from "../collection/support.js";
import { createHarness, type Harness, randomId } from "../helpers/harness.js";
import { FakeNotesProvider, makeNote } from "../notes/fake-provider.js";
import { onboardCompany } from "../runs/helpers.js";

/**
 * Redis loses every queue entry (a flush, a failover without persistence) while one job of each
 * kind is queued. `requeue-lost` gives each its entry back under the same job id (a second run
 * adds nothing), and the workers then finish them. A meeting-note sync cannot be re-enqueued (its
 * provider key lived only in the lost entry): it is failed with a reason (for good) and the caller's
 * retry under the same request_id imports the page as a new attempt.
 */
const API_KEY = `grn_${randomUUID().replaceAll("-", "")}`;
let h: Harness;
let hn: Fake;
let provider: FakeNotesProvider;

beforeAll(async () => {
  hn = await hackernewsFake(() => hnStories(4, "acme"));
  provider = new FakeNotesProvider(API_KEY);
  const notesUrl = await provider.start();
  provider.notes.push(makeNote(1), makeNote(2));
  h = await createHarness({
    HACKERNEWS_API_URL: `${hn.url}/api/v1`,
    COLLECTOR_REQUESTS_PER_SECOND: "1000",
    COLLECTOR_MAX_PAGES: "1",
    MEETINGNOTES_API_URL: notesUrl,
    NOTES_SYNC_WAIT_MS: "0",
  });
});
afterAll(async () => {
  await h?.close();
  await hn?.close();
  await provider?.close();
});

async function flushQueues() {
  await deleteKeys(h.deps.redis, `${h.config.REDIS_PREFIX}:*`);
}

describe("requeue-lost after Redis lost its queues", { timeout: 90_000 }, () => {
  it("re-enqueues collection jobs, analyses and workflow runs once, fails note syncs with a reason, and all finish", async () => {
    const ctx = await onboardCompany(h, { platforms: ["hackernews"], credits: 1000 });
    const { token, entityId } = ctx;

    const job = await createJob(h, token, {
      entity_id: entityId,
      objective: "Lost collection",
      platforms: ["hackernews"],
      collection_only: true,
    });
    expect(job.status).toBe(200);
    const user = await h.deps.db.user.findFirstOrThrow({ where: { memberships: { some: { workspaceId: ctx.workspaceId } } } });
    const { analysis } = await startAnalysis(h.deps.db, user.id, {
      question: "What do developers say about Acme?",
      entity_id: entityId,
      depth: "brief",
      request_id: randomId("lost-"),
      platforms: undefined,
      project_id: undefined,
      search_mode: undefined,
      provided_sources: undefined,
    });
    await enqueueAnalysis(h.deps, analysis.id);
    const skillId = ctx.skills[0]!.id;
    const quote = await h.http.get(`/api/entities/${entityId}/skills/${skillId}/quote?source_mode=saved`).set(bearer(token));
    const run = await h.http
      .post(`/api/entities/${entityId}/skills/${skillId}/runs`)
      .set(bearer(token))
      .set("Idempotency-Key", randomId("lost-run-"))
      .send({ scope_hash: quote.body.scope_hash, max_charge_credits: quote.body.max_charge_credits });
    expect(run.status).toBe(202);
    const requestId = randomId("lost-sync-");
    const sync = await h.http
      .post("/api/meetingnotes/sync")
      .set(bearer(token))
      .send({ api_key: API_KEY, entity_id: entityId, max_notes: 5, request_id: requestId });
    expect(sync.status).toBe(202);

    await flushQueues();
    expect(await h.deps.queues.get("analysis").getJob(analysisJobId(analysis.id))).toBeUndefined();

    const first = await runAdminCommand(h.deps, ["requeue-lost"]);
    expect(first).toMatch(/requeued 1: /);
    expect(first).toMatch(/analyses: checked 1, requeued 1/);
    expect(first).toMatch(/workflow runs: checked 1, requeued 1/);
    expect(first).toMatch(/meeting-note syncs: checked 1, failed 1/);
    expect(first).toMatch(/webhook deliveries: checked \d+, requeued \d+/);
    expect(await h.deps.queues.get("analysis").getJobState(analysisJobId(analysis.id))).toBe("waiting");

    const second = await runAdminCommand(h.deps, ["requeue-lost"]);
    expect(second).toMatch(/requeued 0/);
    expect(second).toMatch(/analyses: checked 1, requeued 0/);
    expect(second).toMatch(/workflow runs: checked 1, requeued 0/);
    expect(second).toMatch(/meeting-note syncs: checked 0, failed 0/);
    const counts = await Promise.all(
      ["collection", "analysis", "workflow-run"].map((q) => h.deps.queues.get(q as "analysis").getWaitingCount()),
    );
    expect(counts).toEqual([1, 1, 1]);

    const failedSync = await h.http.get(`/api/meetingnotes/sync/${requestId}`).set(bearer(token));
    expect(failedSync.body).toMatchObject({ status: "failed", error: { code: "service_unavailable" } });
    expect(failedSync.body.error.detail).toMatch(/same request_id/);

    h.startWorkers(processors, 4);
    await until(async () => {
      const row = await h.deps.db.collectionJob.findUnique({ where: { id: job.body.job_id } });
      return row?.status === "completed";
    }, 30_000);
    await until(async () => {
      const row = await h.deps.db.analysis.findUnique({ where: { id: analysis.id } });
      return row && ["completed", "partial"].includes(row.status);
    }, 30_000);
    const finishedRun = await until(async () => {
      const res = await h.http.get(run.body.links.self).set(bearer(token));
      return res.body.status === "completed" ? res.body : undefined;
    }, 60_000);
    expect(finishedRun.analysis_id).toEqual(expect.any(String));

    // The caller's retry under the same request_id imports the page as a new attempt; the lost one stays failed.
    const retried = await h.http
      .post("/api/meetingnotes/sync")
      .set(bearer(token))
      .send({ api_key: API_KEY, entity_id: entityId, max_notes: 5, request_id: requestId });
    expect([200, 202]).toContain(retried.status);
    const imported = await until(async () => {
      const res = await h.http.get(`/api/meetingnotes/sync/${requestId}`).set(bearer(token));
      return res.body.status === "completed" ? res.body : undefined;
    }, 20_000);
    expect(imported).toMatchObject({ attempt: 2, retry_of: expect.any(String) });
    const syncs = await h.deps.db.noteSync.findMany({ where: { requestId }, orderBy: { attempt: "asc" } });
    expect(syncs.map((s) => [s.attempt, s.status, s.errorCode])).toEqual([
      [1, "failed", "service_unavailable"],
      [2, "completed", null],
    ]);
  });
});
