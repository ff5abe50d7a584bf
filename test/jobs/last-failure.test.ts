import { UnrecoverableError } from "bullmq";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AppError } from "../../src/platform/errors.js";
import { processor } from "../../workers/runtime.js";
import { until } from "../collection/support.js";
import { createHarness, type Harness } from "../helpers/harness.js";

/**
 * The worker runtime records a job's failure on its row once, when an attempt fails and none will
 * follow: on the last attempt, or at once for an UnrecoverableError (BullMQ does not retry it). Real
 * Redis and BullMQ workers; the processor's own hook is what the kinds use to mark their rows failed.
 */
let h: Harness;
const attempts = new Map<string, number>();
const recorded: { erasureId: string; message: string; attempt: number }[] = [];

const flaky = processor<"erasure.run.v1">(
  async ({ erasureId }) => {
    const n = (attempts.get(erasureId) ?? 0) + 1;
    attempts.set(erasureId, n);
    if (erasureId.endsWith("1")) throw new Error(`transient failure ${n}`);
    if (erasureId.endsWith("2") || erasureId.endsWith("4")) throw new UnrecoverableError("permanent failure");
    if (erasureId.endsWith("3") && n === 1) throw new Error("fails once");
    if (erasureId.endsWith("5")) throw new AppError("not_found", "Entity was not found.");
    return { ok: true };
  },
  {
    onLastFailure: async ({ erasureId }, err) => {
      recorded.push({ erasureId, message: err.message, attempt: attempts.get(erasureId) ?? 0 });
      if (erasureId.endsWith("4")) throw new Error("the row could not be marked");
    },
  },
);

const add = (erasureId: string) =>
  h.deps.queues.get("enrichment").add("erasure.run.v1", { erasureId }, { attempts: 3, backoff: { type: "fixed", delay: 20 } });

const ended = async (erasureId: string) => {
  const job = await add(erasureId);
  return until(async () => {
    const state = await job.getState();
    return state === "failed" || state === "completed" ? state : undefined;
  });
};

beforeAll(async () => {
  h = await createHarness();
  h.startWorkers({ "erasure.run.v1": flaky });
});
afterAll(() => h.close());

describe("a job's last failure", () => {
  it("is recorded once, after the last of its retried attempts", async () => {
    const id = "00000000-0000-4000-8000-000000000001";
    expect(await ended(id)).toBe("failed");
    expect(attempts.get(id)).toBe(3);
    expect(recorded.filter((r) => r.erasureId === id)).toEqual([{ erasureId: id, message: "transient failure 3", attempt: 3 }]);
  });

  it("is recorded at once for an UnrecoverableError, which is not retried", async () => {
    const id = "00000000-0000-4000-8000-000000000002";
    expect(await ended(id)).toBe("failed");
    expect(attempts.get(id)).toBe(1);
    expect(recorded.filter((r) => r.erasureId === id)).toEqual([{ erasureId: id, message: "permanent failure", attempt: 1 }]);
  });

  it("is recorded at once for any error the one rule calls permanent (a caller's 4xx), which is not retried", async () => {
    const id = "00000000-0000-4000-8000-000000000005";
    expect(await ended(id)).toBe("failed");
    expect(attempts.get(id)).toBe(1);
    expect(recorded.filter((r) => r.erasureId === id)).toEqual([{ erasureId: id, message: "Entity was not found.", attempt: 1 }]);
  });

  it("is not recorded when a retry succeeds", async () => {
    const id = "00000000-0000-4000-8000-000000000003";
    expect(await ended(id)).toBe("completed");
    expect(attempts.get(id)).toBe(2);
    expect(recorded.filter((r) => r.erasureId === id)).toEqual([]);
  });

  it("still fails the job with the processor's error when recording it fails", async () => {
    const id = "00000000-0000-4000-8000-000000000004";
    const job = await add(id);
    await until(async () => ((await job.getState()) === "failed" ? true : undefined));
    expect((await h.deps.queues.get("enrichment").getJob(job.id as string))?.failedReason).toBe("permanent failure");
    expect(recorded.filter((r) => r.erasureId === id)).toEqual([{ erasureId: id, message: "permanent failure", attempt: 1 }]);
  });
});
