import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Collector } from "../../src/intake/collection/collectors/types.js";
import { FenceLost } from "../../src/intake/collection/progress.js";
import { runCollectionJob } from "../../src/intake/collection/runner.js";
import { NEVER_CANCELLED } from "../../src/jobs/cancellation.js";
import { createHarness, type Harness } from "../helpers/harness.js";
import { coverageOf, createJob, newEntity } from "./support.js";

/**
 * A platform settles in one statement: its fenced progress write and its coverage record. A run
 * whose job was claimed by a newer run while it read its last page writes neither; a run that
 * still holds the job writes both.
 */
let h: Harness;
let token: string;

beforeAll(async () => {
  h = await createHarness();
  token = await h.token();
});
afterAll(async () => {
  await h?.close();
});

/** A collector answering one empty last page, after `beforeAnswer` ran. */
const onePage = (beforeAnswer: () => Promise<unknown>): Collector => ({
  platform: "web",
  blockedReason: () => null,
  describe: () => "settle test",
  fetchPage: async () => {
    await beforeAnswer();
    return { sources: [], next: null };
  },
});

async function queuedJob() {
  const entity = await newEntity(h, token, { name: "Fenceco" });
  const res = await createJob(h, token, {
    entity_id: entity.id,
    objective: "Settle once",
    platforms: ["web"],
    collection_only: true,
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return { entityId: entity.id, jobId: res.body.job_id as string };
}

const row = (id: string) => h.deps.db.collectionJob.findUniqueOrThrow({ where: { id } });

describe("settling a platform", () => {
  it("records coverage and the settled progress together for the run that holds the job", async () => {
    const { entityId, jobId } = await queuedJob();
    const result = await runCollectionJob(h.deps, jobId, {
      collectors: { web: onePage(async () => undefined) },
      cancel: NEVER_CANCELLED,
      finalAttempt: false,
    });
    expect(result.status).toBe("completed");
    expect((await coverageOf(h, entityId, jobId)).web).toMatchObject({ coverageState: "exhaustive", collector: "web" });
    const job = await row(jobId);
    // The job's one platform settled with no analysis to start: the settle completed it.
    expect(job).toMatchObject({ status: "completed", attempts: 1, error: null });
    expect(job.finishedAt).toBeInstanceOf(Date);
    expect((job.progress as Record<string, { status: string; reached_end: boolean }>).web).toMatchObject({
      status: "completed",
      reached_end: true,
    });
  });

  it("leaves a job cancelled while its last page was read cancelled, with no coverage record", async () => {
    const { entityId, jobId } = await queuedJob();
    const cancel = () =>
      h.deps.db.$executeRaw`UPDATE collection_jobs SET status = 'cancelled', finished_at = now() WHERE id = ${jobId}::uuid`;
    const result = await runCollectionJob(h.deps, jobId, {
      collectors: { web: onePage(cancel) },
      cancel: NEVER_CANCELLED,
      finalAttempt: false,
    }).catch((err: unknown) => err);
    expect(result).not.toMatchObject({ status: "completed" });
    expect(await coverageOf(h, entityId, jobId)).toEqual({});
    expect(await row(jobId)).toMatchObject({ status: "cancelled", attempts: 1 });
  });

  it("completes a job of two platforms once both settled, and only then", async () => {
    const entity = await newEntity(h, token, { name: "Twoco" });
    const res = await createJob(h, token, {
      entity_id: entity.id,
      objective: "Settle twice",
      platforms: ["web", "reddit"],
      collection_only: true,
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const jobId = res.body.job_id as string;
    const statuses: string[] = [];
    const seeStatus = async () => {
      statuses.push((await row(jobId)).status);
    };
    const result = await runCollectionJob(h.deps, jobId, {
      collectors: { web: onePage(seeStatus), reddit: { ...onePage(seeStatus), platform: "reddit" } },
      cancel: NEVER_CANCELLED,
      finalAttempt: false,
    });
    expect(result.status).toBe("completed");
    expect(statuses).toEqual(["running", "running"]);
    expect(Object.keys(await coverageOf(h, entity.id, jobId)).sort()).toEqual(["reddit", "web"]);
    expect(await row(jobId)).toMatchObject({ status: "completed" });
  });

  it("writes neither when a newer run claimed the job meanwhile", async () => {
    const { entityId, jobId } = await queuedJob();
    // While this run reads its page, another run claims the job (the claim increments attempts).
    const newerClaim = () => h.deps.db.$executeRaw`UPDATE collection_jobs SET attempts = attempts + 1 WHERE id = ${jobId}::uuid`;
    await expect(
      runCollectionJob(h.deps, jobId, { collectors: { web: onePage(newerClaim) }, cancel: NEVER_CANCELLED, finalAttempt: false }),
    ).rejects.toBeInstanceOf(FenceLost);
    expect(await coverageOf(h, entityId, jobId)).toEqual({});
    const job = await row(jobId);
    expect(job).toMatchObject({ status: "running", attempts: 2 });
    // No progress of the platform was written by the stale run (a job starts with none stored).
    expect((job.progress as Record<string, unknown>).web).toBeUndefined();
  });
});
