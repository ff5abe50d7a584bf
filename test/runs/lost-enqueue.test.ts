import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runJobId } from "../../src/workflows/runs/service.js";
import { processors } from "../../workers/processors.js";
import { workflowRunProcessor } from "../../workers/workflow-run.js";
import { until } from "../collection/support.js";
import { createHarness, type Harness, randomId } from "../helpers/harness.js";
import { onboardCompany } from "./helpers.js";

/**
 * A workflow run whose analysis Redis refused to queue: the step's submit removes the analysis it
 * wrote and fails before the run names it, the step's retry submits it anew, and the run finishes
 * without an operator. Redis refuses for real: the analysis queue's wait list is replaced by a key of another
 * type, so BullMQ's add script fails with WRONGTYPE until it is restored.
 */
let h: Harness;
beforeAll(async () => {
  h = await createHarness();
  h.startWorkers({ ...processors, "workflow.run.v1": workflowRunProcessor }, 4);
});
afterAll(() => h.close());

const auth = (token: string) => ({ Authorization: `Bearer ${token}` });

describe("a refused analysis enqueue inside a workflow run", { timeout: 60_000 }, () => {
  it("is submitted anew by the step's retry, and the run completes", async () => {
    const ctx = await onboardCompany(h, { platforms: ["hackernews"], credits: 500 });
    await h.http
      .post("/agent/v1/ingest/content")
      .set(auth(ctx.token))
      .send({ entity_id: ctx.entityId, sources: [{ platform: "hackernews", id: "s1", content: "Acme feature 1 is fast and reliable." }] })
      .expect(200);
    const skillId = ctx.skills[0]?.id as string;
    const quote = await h.http
      .get(`/api/entities/${ctx.entityId}/skills/${skillId}/quote?source_mode=saved`)
      .set(auth(ctx.token))
      .expect(200);

    const meta = `${h.deps.queues.prefixFor("analysis")}:analysis:meta`;
    const aside = `${meta}:aside`;
    const hadMeta = (await h.deps.redis.exists(meta)) === 1;
    if (hadMeta) await h.deps.redis.rename(meta, aside);
    await h.deps.redis.set(meta, "not a hash");
    const restore = async () => {
      if ((await h.deps.redis.type(meta)) !== "string") return;
      await h.deps.redis.del(meta);
      if (hadMeta) await h.deps.redis.rename(aside, meta);
    };
    try {
      const run = await h.http
        .post(`/api/entities/${ctx.entityId}/skills/${skillId}/runs`)
        .set(auth(ctx.token))
        .set("Idempotency-Key", randomId("lost-"))
        .send({ scope_hash: quote.body.scope_hash, max_charge_credits: quote.body.max_charge_credits });
      expect(run.status).toBe(202);
      // The run's step submitted its analysis and had the enqueue refused: its attempt failed, and the
      // analysis it wrote was removed again (a submit refused by the queue leaves nothing behind).
      const queue = h.deps.queues.get("workflow-run");
      await until(async () => ((await queue.getJob(runJobId(run.body.id)))?.attemptsMade ?? 0) >= 1 || undefined, 20_000);
      expect(await h.deps.db.analysis.count({ where: { requestId: `workflow-run:${run.body.id}` } })).toBe(0);
      // The refused step has not named an analysis on the run.
      expect((await h.deps.db.workflowRun.findUniqueOrThrow({ where: { id: run.body.id } })).analysisId).toBeNull();
      await restore();

      const finished = await until(async () => {
        const row = await h.deps.db.workflowRun.findUniqueOrThrow({ where: { id: run.body.id } });
        return ["completed", "failed", "blocked"].includes(row.status) ? row : undefined;
      }, 40_000);
      expect(finished.status, finished.error ?? "").toBe("completed");
      // The retry submitted the analysis anew, once: the run names the one analysis of its request id.
      const analyses = await h.deps.db.analysis.findMany({ where: { requestId: `workflow-run:${run.body.id}` } });
      expect(analyses.map((a) => a.id)).toEqual([finished.analysisId]);
      const done = await h.deps.db.analysis.findUniqueOrThrow({ where: { id: finished.analysisId as string } });
      expect(["completed", "partial"]).toContain(done.status);
    } finally {
      await restore();
    }
  });
});
