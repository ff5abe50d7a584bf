import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { watchJob } from "../../src/jobs/cancellation.js";
import { jobEnded, markCancelled } from "../../src/jobs/lifecycle.js";
import { until } from "../collection/support.js";
import { createHarness, type Harness } from "../helpers/harness.js";

/**
 * A worker learns of a cancel through the job's end channel, not by reading the row: with the row
 * read only once a minute, a cancel still reaches the watch within moments. Real PostgreSQL and Redis.
 */
let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(() => h.close());

async function queuedAnalysis(): Promise<string> {
  const sub = `signal-${randomUUID()}`;
  await h.http
    .get("/agent/v1/connection")
    .set("Authorization", `Bearer ${await h.token(sub)}`)
    .expect(200);
  const user = await h.deps.db.user.findUniqueOrThrow({ where: { sub } });
  const row = await h.deps.db.analysis.create({ data: { userId: user.id, question: "What changed?", status: "running" } });
  return row.id;
}

const cancel = async (id: string) => {
  expect((await markCancelled(h.deps.db, "analysis", id)).changed).toBe(true);
  await jobEnded(h.deps, { kind: "analysis", id, status: "cancelled" });
};

describe("the cancel watch of a running job", () => {
  it("aborts within moments of the cancel's announcement, though its row is read once a minute", async () => {
    const id = await queuedAnalysis();
    const channels = h.deps.pubsub.channelCount;
    const watch = watchJob(h.deps, "analysis", id, "The analysis", 60_000);
    try {
      await until(async () => (h.deps.pubsub.channelCount > channels ? true : undefined), 3_000);
      // Past the watch's first read of its row (a second in): from here only the signal can abort it.
      await new Promise((resolve) => setTimeout(resolve, 1_300));
      expect(watch.signal.aborted).toBe(false);
      const at = Date.now();
      await cancel(id);
      await until(async () => (watch.signal.aborted ? true : undefined), 3_000);
      expect(Date.now() - at).toBeLessThan(2_000);
      expect(() => watch.checkpoint()).toThrow(/was cancelled/);
    } finally {
      watch.stop();
    }
    // Stopping the watch gives its channel up.
    await until(async () => (h.deps.pubsub.channelCount === channels ? true : undefined), 2_000);
  });

  it("sees a cancel announced before it listened, from the row it reads when it starts", async () => {
    const id = await queuedAnalysis();
    await cancel(id);
    const watch = watchJob(h.deps, "analysis", id, "The analysis", 60_000);
    try {
      await until(async () => (watch.signal.aborted ? true : undefined), 3_000);
    } finally {
      watch.stop();
    }
  });

  it("ignores the end of a job that completed", async () => {
    const id = await queuedAnalysis();
    const watch = watchJob(h.deps, "analysis", id, "The analysis", 60_000);
    try {
      await h.deps.db.analysis.update({ where: { id }, data: { status: "completed" } });
      await jobEnded(h.deps, { kind: "analysis", id, status: "completed" });
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(watch.signal.aborted).toBe(false);
    } finally {
      watch.stop();
    }
  });
});
