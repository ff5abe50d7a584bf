import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runAdminCommand } from "../../src/governance/admin/commands.js";
import { jobIds } from "../../src/jobs/ids.js";
import { sweepProcessor } from "../../workers/sweeps.js";
import { until } from "../collection/support.js";
import { type EmbeddingsServer, startEmbeddingsServer } from "../helpers/embeddings-server.js";
import { bearer, createEntityFor } from "../helpers/evidence.js";
import { createHarness, type Harness } from "../helpers/harness.js";
import { person } from "../workspaces/support.js";

/**
 * Evidence capture runs are a job kind of the shared lifecycle: an editor cancels a queued or running
 * run (a running one stops at its next page), a viewer cannot, cancelled is final under the same key,
 * the end becomes a `sweep_run.cancelled` webhook delivery of the workspace, and requeue-lost puts back a run whose queue
 * entry is gone. The embeddings provider is a local OpenAI-format server that can hold its answers.
 */
let provider: EmbeddingsServer;
let hold: Promise<void> | null = null;
let release: () => void = () => undefined;
let h: Harness;
let token: string;

beforeAll(async () => {
  provider = await startEmbeddingsServer(async () => {
    if (hold) await hold;
    return undefined;
  });
  h = await createHarness({ SWEEP_WAIT_MS: "0", EMBEDDINGS_URL: provider.url, EMBEDDINGS_MODEL: "fake-embedding-model" });
  token = await h.token();
});
afterAll(async () => {
  release();
  await h?.close();
  await provider?.close();
});

async function capture(n: number, key: string) {
  const entity = await createEntityFor(h, token, { name: `Capture ${key}` });
  await h.http
    .post("/agent/v1/ingest/content")
    .set(bearer(token))
    .send({
      entity_id: entity.id,
      sources: Array.from({ length: n }, (_, i) => ({ id: `${key}-${i}`, platform: "agent", content: `Export is broken (${key} ${i}).` })),
    })
    .expect(200);
  const res = await h.http.post("/api/sweeps/run").set(bearer(token)).send({ entity_id: entity.id, idempotency_key: key });
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  return { entity, run: res.body as { run_id: string; status: string } };
}

const cancel = (runId: string, auth = bearer(token)) => h.http.post(`/api/sweeps/runs/${runId}/cancel`).set(auth);

describe("cancelling an evidence capture run", { timeout: 60_000 }, () => {
  it("removes a queued run from the queue; cancelled is final under the same key; a viewer may not cancel", async () => {
    const { entity, run } = await capture(2, "queued-key");
    const queue = h.deps.queues.get("enrichment");
    expect(await queue.getJob(jobIds.sweep(run.run_id))).toBeDefined();

    const viewer = await person(h);
    await h.http
      .post(`/api/workspaces/${entity.workspace_id}/members`)
      .set(bearer(token))
      .send({ user_id: viewer.userId, role: "viewer" })
      .expect(201);
    const refused = await cancel(run.run_id, bearer(viewer.token));
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe("forbidden");

    // A webhook endpoint of the workspace (`.invalid` never resolves, so nothing is sent).
    const endpoint = await h.http
      .post(`/api/workspaces/${entity.workspace_id}/webhooks`)
      .set(bearer(token))
      .send({ url: "https://hooks.webhooks.invalid/capture" })
      .expect(201);

    const cancelled = await cancel(run.run_id);
    expect(cancelled.status, JSON.stringify(cancelled.body)).toBe(200);
    const deliveries = await h.deps.db.webhookDelivery.findMany({ where: { endpointId: endpoint.body.id } });
    expect(deliveries.map((d) => d.eventType)).toEqual(["sweep_run.cancelled"]);
    expect(cancelled.body).toMatchObject({ run_id: run.run_id, status: "cancelled" });
    expect(await queue.getJob(jobIds.sweep(run.run_id))).toBeUndefined();
    expect((await cancel(run.run_id)).body.status).toBe("cancelled");

    const again = await h.http.post("/api/sweeps/run").set(bearer(token)).send({ entity_id: entity.id, idempotency_key: "queued-key" });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ run_id: run.run_id, status: "cancelled" });
    const stranger = await person(h);
    expect((await cancel(run.run_id, bearer(stranger.token))).status).toBe(404);
  });

  it("stops a running run at its next page; what it enriched stays, and it never completes", async () => {
    hold = new Promise<void>((resolve) => {
      release = resolve;
    });
    const before = provider.requests();
    const workers = h.startWorkers({ "sweep.run.v1": sweepProcessor });
    try {
      const { run } = await capture(3, "running-key");
      // The run is embedding its first page, held by the provider.
      await until(async () => (provider.requests() > before ? true : undefined), 15_000);
      const cancelled = await cancel(run.run_id);
      expect(cancelled.body.status).toBe("cancelled");
      release();
      hold = null;
      // The job ends (and leaves the queue) once its page is done and its checkpoint sees the cancel.
      await until(async () => ((await h.deps.queues.get("enrichment").getJob(jobIds.sweep(run.run_id))) ? undefined : true), 15_000);
      const row = await h.deps.db.sweepRun.findUniqueOrThrow({ where: { id: run.run_id } });
      expect(row.status).toBe("cancelled");
      expect(row.finishedAt).not.toBeNull();
    } finally {
      release();
      hold = null;
      await workers.close();
    }
  });

  it("is put back by requeue-lost when its queue entry is gone, and completes", async () => {
    const { run } = await capture(2, "lost-key");
    await h.deps.queues.get("enrichment").remove(jobIds.sweep(run.run_id));
    const output = await runAdminCommand(h.deps, ["requeue-lost", "0"]);
    expect(output).toMatch(/evidence capture runs: checked \d+, requeued 1/);
    const workers = h.startWorkers({ "sweep.run.v1": sweepProcessor });
    try {
      const done = await until(async () => {
        const row = await h.deps.db.sweepRun.findUniqueOrThrow({ where: { id: run.run_id } });
        return row.status === "completed" ? row : undefined;
      }, 20_000);
      expect(done.status).toBe("completed");
    } finally {
      await workers.close();
    }
  });
});
