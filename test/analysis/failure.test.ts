import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runAnalysisJob } from "../../src/insights/analysis/runner.js";
import { analysisProcessor } from "../../workers/analysis.js";
import { createHarness, type Harness } from "../helpers/harness.js";
import { createTenant, storeSources, type Tenant, waitFor } from "./fixtures.js";
import { listen, openStream } from "./sse-client.js";

/**
 * A failing analysis: retried attempts leave no terminal event; the last attempt stores
 * `error` {status: failed, detail} with the row, and the stream ends with it. The failure
 * is arranged with a row the engine cannot run (an unknown depth).
 */
let h: Harness;
let base: string;
let closeServer: () => Promise<void>;
let tenant: Tenant;

beforeAll(async () => {
  h = await createHarness();
  ({ baseUrl: base, close: closeServer } = await listen(h));
  tenant = await createTenant(h);
  // Something in scope, so the engine gets as far as the depth it cannot run.
  await storeSources(h, tenant, [{ platform: "reddit", content: "The pricing is too high for a small team." }]);
});
afterAll(async () => {
  await closeServer();
  await h.close();
});

const broken = async () =>
  (
    await h.deps.db.analysis.create({
      data: { userId: tenant.userId, workspaceId: tenant.workspaceId, question: "pricing?", depth: "bottomless", status: "queued" },
    })
  ).id;

describe("a failing analysis", () => {
  it("an attempt that will be retried throws and stores no terminal event", async () => {
    const id = await broken();
    await expect(runAnalysisJob(h.deps, id)).rejects.toThrow();
    const events = await h.deps.db.analysisEvent.findMany({ where: { analysisId: id } });
    expect(events.some((e) => e.event === "error" || e.event === "result")).toBe(false);
    expect((await h.deps.db.analysis.findUniqueOrThrow({ where: { id } })).status).toBe("running");
  });

  it("the last attempt ends the stream with an error event and marks the row failed", async () => {
    const id = await broken();
    const stream = await openStream(`${base}/agent/v1/analysis/${id}/events`, { token: tenant.token });
    h.startWorkers({ "analysis.run.v1": analysisProcessor });
    // Three attempts with backoff; the last one records the failure.
    await h.deps.queues.enqueue("analysis.run.v1", { analysisId: id }, { jobId: `analysis-failure-${id}` });
    await stream.closed;
    const last = stream.events.at(-1)!;
    expect(last.event).toBe("error");
    expect(last.data).toEqual({ analysis_id: id, status: "failed", detail: "The analysis failed on an internal error." });
    expect(stream.events.filter((e) => e.event === "error")).toHaveLength(1);
    expect(stream.events.map((e) => e.id)).toEqual(stream.events.map((_, i) => i + 1));
    const row = await waitFor(async () => {
      const r = await h.deps.db.analysis.findUniqueOrThrow({ where: { id } });
      return r.status === "failed" ? r : undefined;
    });
    expect(row.error).toBe("The analysis failed on an internal error.");
    expect(row.finishedAt).not.toBeNull();

    // A re-delivered job for the finished analysis changes nothing.
    const before = await h.deps.db.analysisEvent.count({ where: { analysisId: id } });
    await expect(runAnalysisJob(h.deps, id)).resolves.toEqual({ status: "failed" });
    expect(await h.deps.db.analysisEvent.count({ where: { analysisId: id } })).toBe(before);
  });
});
