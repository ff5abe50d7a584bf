import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHarness, type Harness, randomId } from "../helpers/harness.js";
import { createJob, newEntity } from "./support.js";

/**
 * Identical creates racing on one idempotency key: the row id and the queue job id are
 * derived from the key, so every racer collides on them as well as on the key. Each
 * must answer 200 with the one job, round after round.
 */
const ROUNDS = 30;
const RACERS = 20;

let h: Harness;
let token: string;
let entityId: string;

beforeAll(async () => {
  // A pool as large as the crowd, so the inserts really run at the same time.
  h = await createHarness({ DATABASE_POOL_SIZE: String(RACERS) });
  token = await h.token("concurrent-creator");
  entityId = (await newEntity(h, token, { platforms: ["hackernews"] })).id;
});
afterAll(() => h.close());

describe("POST /agent/v1/ingest/collection/jobs under concurrency", () => {
  it(`${RACERS} identical creates with one key, ${ROUNDS} rounds: every answer is 200 with the one job`, async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const key = randomId(`stress-${round}-`);
      const body = { entity_id: entityId, objective: "Why do teams churn?", platforms: ["hackernews"], idempotency_key: key };
      const answers = await Promise.all(Array.from({ length: RACERS }, () => createJob(h, token, body)));
      const statuses = answers.map((r) => r.status);
      expect(statuses, `round ${round}: ${JSON.stringify(answers.find((r) => r.status !== 200)?.body)}`).toEqual(Array(RACERS).fill(200));
      expect(new Set(answers.map((r) => r.body.job_id)).size, `round ${round}`).toBe(1);
      expect(await h.deps.db.collectionJob.count({ where: { idempotencyKey: key } })).toBe(1);
    }
  }, 120_000);
});
