import type { Job, Worker } from "bullmq";
import { expect } from "vitest";
import type { WorkerHandles } from "../../workers/runtime.js";
import { until } from "../collection/support.js";

/**
 * Shared pieces of the cancellation tests: a record of when each BullMQ job ended on a
 * worker (so a test awaits the worker's own end, not a sleep), a hold that keeps an
 * upstream's answer until the test releases it, and the shape of a 409 for a job that ended.
 */
export interface Ended {
  at: number;
  outcome: "completed" | "failed";
  value: unknown;
}

/** Records the end of every job the given workers run, keyed by BullMQ job id. */
export function trackEnds(handles: WorkerHandles) {
  const ends = new Map<string, Ended>();
  for (const worker of handles.workers as Worker[]) {
    worker.on("completed", (job: Job, value: unknown) => {
      if (job.id) ends.set(job.id, { at: Date.now(), outcome: "completed", value });
    });
    worker.on("failed", (job: Job | undefined, err: Error) => {
      if (job?.id) ends.set(job.id, { at: Date.now(), outcome: "failed", value: err.message });
    });
  }
  return {
    ends,
    /** Resolves with the end of the job once its worker has finished it. */
    endOf: (jobId: string, timeoutMs = 10_000) => until(async () => ends.get(jobId), timeoutMs),
  };
}

/** A gate an interceptor awaits: `open()` lets every waiter through, `waiting` counts them. */
export function gate() {
  let release: () => void = () => undefined;
  let promise = new Promise<void>((resolve) => {
    release = resolve;
  });
  const state = { waiting: 0 };
  return {
    state,
    wait: async () => {
      state.waiting += 1;
      await promise;
    },
    open: () => release(),
    reset: () => {
      promise = new Promise<void>((resolve) => {
        release = resolve;
      });
    },
  };
}

/** The 409 of a cancel of a job that already ended, naming the state it ended in. */
export function expectEndedConflict(res: { status: number; body: Record<string, unknown> }, status: string) {
  expect(res.status, JSON.stringify(res.body)).toBe(409);
  expect(res.body).toMatchObject({ code: "conflict", status, detail: expect.any(String) });
}

/** Runs `cancel` and answers its response and how long until `isCancelled` held (ms). */
export async function timeCancel<R>(
  cancel: () => Promise<R>,
  isCancelled: () => Promise<boolean>,
  timeoutMs = 5000,
): Promise<{ res: R; latencyMs: number; startedAt: number }> {
  const startedAt = Date.now();
  const res = await cancel();
  await until(async () => (await isCancelled()) || undefined, timeoutMs);
  return { res, latencyMs: Date.now() - startedAt, startedAt };
}
