import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { collectionProcessor } from "../../src/intake/collection/runner.js";
import { createHarness, type Harness } from "../helpers/harness.js";
import { coverageOf, createJob, newEntity, pollJob } from "./support.js";

/** An upstream that cannot be reached is reported as such (coverage unknown), not as a refusal. */
let h: Harness;
let token: string;

beforeAll(async () => {
  h = await createHarness({
    // `.invalid` never resolves (RFC 2606): the lookup fails with ENOTFOUND.
    HACKERNEWS_API_URL: "http://hn-upstream.invalid/api/v1",
    COLLECTOR_RETRIES: "2",
    COLLECTOR_TIMEOUT_MS: "3000",
    COLLECTOR_ALLOW_PRIVATE_URLS: "true",
  });
  token = await h.token();
  h.startWorkers({ "collection.run.v1": collectionProcessor() });
});
afterAll(async () => {
  await h?.close();
});

describe("an unreachable upstream", () => {
  it("settles at once as unknown coverage with what happened, and lists it in errors", async () => {
    const entity = await newEntity(h, token, { name: "Unreachco" });
    const started = Date.now();
    const created = await createJob(h, token, {
      entity_id: entity.id,
      objective: "What do people say about Unreachco?",
      collection_only: true,
      platforms: ["hackernews", "youtube"],
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const status = await pollJob(h, token, created.body.job_id);
    // Not ~45 s of retries: a name that does not exist is known at the first try.
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(status.status).toBe("completed");
    expect(status.attempts).toBe(1);
    expect(status.coverage).toEqual({ hackernews: "unknown", youtube: "blocked" });
    expect(status.progress.hackernews).toMatchObject({ status: "failed", coverage_state: "unknown" });
    expect(status.progress.hackernews?.reason).toMatch(
      /^the upstream could not be reached: unreachable: the name hn-upstream\.invalid could not be resolved \(ENOTFOUND\)/,
    );
    expect(status.progress.hackernews?.reason).not.toMatch(/refused/);
    expect(status.errors).toContainEqual({ platform: "hackernews", detail: expect.stringMatching(/^unreachable: /) });
    expect(status.errors).toContainEqual({ platform: "youtube", detail: expect.stringMatching(/no youtube collector/) });
    const coverage = await coverageOf(h, entity.id, created.body.job_id);
    expect(coverage.hackernews).toMatchObject({ coverageState: "unknown", notes: expect.stringMatching(/could not be reached/) });
  }, 30_000);
});
