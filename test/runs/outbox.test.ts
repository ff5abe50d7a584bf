import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runAdminCommand } from "../../src/governance/admin/commands.js";
import { startOutboxRelay } from "../../src/jobs/outbox.js";
import { runJobId } from "../../src/workflows/runs/service.js";
import { processors } from "../../workers/processors.js";
import { workflowRunProcessor } from "../../workers/workflow-run.js";
import { until } from "../collection/support.js";
import { createHarness, type Harness, randomId } from "../helpers/harness.js";
import { expectLedgerConsistent, onboardCompany } from "./helpers.js";

/**
 * A workflow run's first step is staged with the run in the transaction that reserves its credits,
 * and sent to the queue after commit. When that send fails (Redis answers, but refuses the add),
 * the run is accepted, stored and reserved, its step stays staged, and the worker's relay (or the
 * operator's requeue-lost) sends it once the queue takes jobs again: the run completes with no
 * request repeated. Redis refuses for real: the workflow-run queue's meta key is replaced by a key of
 * another type, so BullMQ's add script fails with WRONGTYPE until it is restored.
 */
let h: Harness;
beforeAll(async () => {
  h = await createHarness();
  h.startWorkers({ ...processors, "workflow.run.v1": workflowRunProcessor }, 4);
});
afterAll(() => h.close());

const auth = (token: string) => ({ Authorization: `Bearer ${token}` });

async function refuseRunJobs(): Promise<() => Promise<void>> {
  const meta = `${h.deps.queues.prefixFor("workflow-run")}:workflow-run:meta`;
  const aside = `${meta}:aside`;
  const hadMeta = (await h.deps.redis.exists(meta)) === 1;
  if (hadMeta) await h.deps.redis.rename(meta, aside);
  await h.deps.redis.set(meta, "not a hash");
  return async () => {
    if ((await h.deps.redis.type(meta)) !== "string") return;
    await h.deps.redis.del(meta);
    if (hadMeta) await h.deps.redis.rename(aside, meta);
  };
}

async function startRun(ctx: Awaited<ReturnType<typeof onboardCompany>>) {
  const skillId = ctx.skills[0]?.id as string;
  const quote = await h.http
    .get(`/api/entities/${ctx.entityId}/skills/${skillId}/quote?source_mode=saved`)
    .set(auth(ctx.token))
    .expect(200);
  const run = await h.http
    .post(`/api/entities/${ctx.entityId}/skills/${skillId}/runs`)
    .set(auth(ctx.token))
    .set("Idempotency-Key", randomId("staged-"))
    .send({ scope_hash: quote.body.scope_hash, max_charge_credits: quote.body.max_charge_credits });
  expect(run.status, JSON.stringify(run.body)).toBe(202);
  return run.body.id as string;
}

const finished = (runId: string) =>
  until(async () => {
    const row = await h.deps.db.workflowRun.findUniqueOrThrow({ where: { id: runId } });
    return ["completed", "failed", "blocked"].includes(row.status) ? row : undefined;
  }, 40_000);

describe("a run's first step after commit", { timeout: 60_000 }, () => {
  it("stays staged when the queue refuses it, and the relay sends it once the queue is back", async () => {
    const ctx = await onboardCompany(h, { platforms: ["hackernews"], credits: 500 });
    const restore = await refuseRunJobs();
    let relay: { close: () => Promise<void> } | undefined;
    try {
      const runId = await startRun(ctx);
      const staged = await h.deps.db.jobOutbox.findFirstOrThrow({ where: { jobId: runJobId(runId) } });
      expect(staged).toMatchObject({ jobName: "workflow.run.v1", payload: { runId }, attempts: 1 });
      expect(staged.lastError).toMatch(/WRONGTYPE|wrong kind/i);
      expect((await h.deps.db.workflowRun.findUniqueOrThrow({ where: { id: runId } })).status).toBe("queued");

      // While the queue still refuses, the relay keeps the entry and counts the attempt.
      relay = startOutboxRelay(h.deps, { intervalMs: 100, graceMs: 0 });
      await until(async () => {
        const entry = await h.deps.db.jobOutbox.findUnique({ where: { id: staged.id } });
        return entry && entry.attempts >= 2 ? entry : undefined;
      }, 10_000);
      await restore();

      await until(async () => ((await h.deps.db.jobOutbox.count({ where: { id: staged.id } })) === 0 ? true : undefined), 10_000);
      const done = await finished(runId);
      expect(done.status, done.error ?? "").toBe("completed");
      await expectLedgerConsistent(h, ctx.workspaceId);
    } finally {
      await relay?.close();
      await restore();
    }
  });

  it("is sent by the operator's requeue-lost when no worker relays it", async () => {
    const ctx = await onboardCompany(h, { platforms: ["hackernews"], credits: 500 });
    const restore = await refuseRunJobs();
    let runId: string;
    try {
      runId = await startRun(ctx);
    } finally {
      await restore();
    }
    expect(await h.deps.db.jobOutbox.count({ where: { jobId: runJobId(runId) } })).toBe(1);
    const output = await runAdminCommand(h.deps, ["requeue-lost", "0"]);
    expect(output).toMatch(/staged jobs: sent 1/);
    expect(await h.deps.db.jobOutbox.count({ where: { jobId: runJobId(runId) } })).toBe(0);
    expect((await finished(runId)).status).toBe("completed");
  });
});
