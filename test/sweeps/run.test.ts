import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createBulkEmbedder } from "../../src/insights/embed/provider.js";
import { STATIC_MODEL, staticEmbedder } from "../../src/insights/embed/static.js";
import { enrichContent } from "../../src/insights/enrichment/service.js";
import { jobIds } from "../../src/jobs/ids.js";
import { sweepProcessor } from "../../workers/sweeps.js";
import { until } from "../collection/support.js";
import { bearer, createEntityFor, createKeyFor } from "../helpers/evidence.js";
import { createHarness, type Harness } from "../helpers/harness.js";

/**
 * POST /api/sweeps/run (evidence capture) with a real worker: the entity's newly stored originals
 * are embedded and split into opinion units, and the run answers its id, status and statistics.
 * Only the capture processor runs here (the enrichment queue's own jobs are not processed), so
 * whatever is enriched was enriched by the run.
 */
let h: Harness;
let token: string;

beforeAll(async () => {
  h = await createHarness({ SWEEP_WAIT_MS: "8000" });
  token = await h.token();
  // A process reads the static embedding model on its first embed (seconds on a loaded machine); the runs here
  // are timed on what follows, and a run may take that long to answer.
  staticEmbedder().embedSync(["warm"]);
});
afterAll(() => h.close());

const sweep = (body: Record<string, unknown>, auth: Record<string, string> = bearer(token)) =>
  h.http.post("/api/sweeps/run").set(auth).send(body);

async function ingest(entityId: string, n: number, prefix: string) {
  const res = await h.http
    .post("/agent/v1/ingest/content")
    .set(bearer(token))
    .send({
      entity_id: entityId,
      sources: Array.from({ length: n }, (_, i) => ({
        id: `${prefix}-${i}`,
        platform: "agent",
        content: `The export to CSV is broken and slow. Support was friendly and fixed my billing question (${prefix} ${i}).`,
        comments: i === 0 ? [{ text: "Same here: the export keeps failing, which is frustrating." }] : [],
      })),
    });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.content_ids as string[];
}

const enrichedState = async (ids: string[]) =>
  (
    await h.deps.db.content.findMany({
      where: { id: { in: ids } },
      select: { id: true, enrichment: { select: { enrichedAt: true, embeddingModel: true } } },
    })
  ).map((r) => ({ id: r.id, enrichedAt: r.enrichment?.enrichedAt ?? null, embeddingModel: r.enrichment?.embeddingModel ?? null }));

describe("POST /api/sweeps/run", () => {
  it("enriches the entity's newly stored originals and answers the run with its statistics; the same key answers the same run", async () => {
    const workers = h.startWorkers({ "sweep.run.v1": sweepProcessor });
    try {
      const entity = await createEntityFor(h, token, { name: "Capture One" });
      const ids = await ingest(entity.id, 2, "one");
      const res = await sweep({ entity_id: entity.id, idempotency_key: "capture-one-key" });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body).toMatchObject({
        run_id: expect.any(String),
        entity_id: entity.id,
        idempotency_key: "capture-one-key",
        status: "completed",
        statistics: {
          originals: 3,
          enriched: 3,
          already_enriched: 0,
          missing: 0,
          opinion_units_inserted: expect.any(Number),
          remaining: 0,
          embedding_model: STATIC_MODEL,
        },
        error: null,
        attempts: 1,
        next: `/api/sweeps/runs/${res.body.run_id}`,
      });
      const units = await h.deps.db.opinionUnit.count({ where: { contentId: { in: ids } } });
      expect(units).toBeGreaterThan(0);
      expect(res.body.statistics.opinion_units_inserted).toBe(units);
      for (const row of await enrichedState(ids)) expect(row).toMatchObject({ enrichedAt: expect.any(Date), embeddingModel: STATIC_MODEL });

      // The same key answers the same run, without running it again.
      const again = await sweep({ entity_id: entity.id, idempotency_key: "capture-one-key" });
      expect(again.status).toBe(200);
      expect(again.body).toEqual(res.body);
      // The same key for another entity is a conflict.
      const other = await createEntityFor(h, token, { name: "Capture Other" });
      const conflict = await sweep({ entity_id: other.id, idempotency_key: "capture-one-key" });
      expect(conflict.status).toBe(409);
      expect(conflict.body.code).toBe("idempotency_conflict");

      // A new key takes only what was stored since and is not enriched yet (a source and its comment).
      const more = await ingest(entity.id, 1, "two");
      const second = await sweep({ entity_id: entity.id, idempotency_key: "capture-one-key-2" });
      expect(second.status).toBe(200);
      expect(second.body.run_id).not.toBe(res.body.run_id);
      expect(second.body.statistics).toMatchObject({ originals: 2, enriched: 2, remaining: 0 });
      expect((await enrichedState(more))[0]?.enrichedAt).toBeInstanceOf(Date);
      // Nothing new: a run with nothing to do completes with zero originals.
      const third = await sweep({ entity_id: entity.id, idempotency_key: "capture-one-key-3" });
      expect(third.body).toMatchObject({ status: "completed", statistics: { originals: 0, enriched: 0, remaining: 0 } });
    } finally {
      await workers.close();
    }
  });

  it("answers 202 while the run waits, is polled at next, and counts originals the enrichment queue finished first", async () => {
    const entity = await createEntityFor(h, token, { name: "Capture Two" });
    const ids = await ingest(entity.id, 2, "late");
    // No worker yet: the answer comes after SWEEP_WAIT_MS with the queued run.
    const res = await sweep({ entity_id: entity.id, idempotency_key: "capture-two-key" });
    expect(res.status).toBe(202);
    expect(res.headers.location).toBe(res.body.next);
    expect(res.body).toMatchObject({ status: "queued", statistics: { originals: null, enriched: 0 }, started_at: null });

    // The enrichment queue (which ingest feeds) enriches one of the run's originals first.
    await enrichContent(h.deps.pool, createBulkEmbedder(h.config), [ids[1] as string]);
    const workers = h.startWorkers({ "sweep.run.v1": sweepProcessor });
    try {
      const done = await until(async () => {
        const poll = await h.http.get(res.body.next).set(bearer(token));
        return poll.body.status === "completed" ? poll : undefined;
      });
      expect(done.status).toBe(200);
      expect(done.body).toMatchObject({
        run_id: res.body.run_id,
        status: "completed",
        statistics: { originals: 3, enriched: 2, already_enriched: 1, missing: 0, remaining: 0 },
      });
    } finally {
      await workers.close();
    }
  });

  it("counts the originals stored under its key even when the enrichment queue finished them before the run", async () => {
    const workers = h.startWorkers({ "sweep.run.v1": sweepProcessor });
    try {
      const entity = await createEntityFor(h, token, { name: "Capture Five" });
      const stored = await h.http
        .post("/agent/v1/ingest/content")
        .set(bearer(token))
        .send({ entity_id: entity.id, collection_run_id: "capture-five-key", sources: [{ platform: "agent", content: "Sync is slow." }] })
        .expect(200);
      await enrichContent(h.deps.pool, createBulkEmbedder(h.config), stored.body.content_ids);
      const res = await sweep({ entity_id: entity.id, idempotency_key: "capture-five-key" });
      expect(res.body).toMatchObject({ status: "completed", statistics: { originals: 1, enriched: 0, already_enriched: 1, remaining: 0 } });
      // Under another key the same, already enriched, original is not the run's.
      const other = await sweep({ entity_id: entity.id, idempotency_key: "capture-five-other" });
      expect(other.body.statistics).toMatchObject({ originals: 0 });
    } finally {
      await workers.close();
    }
  });

  it("retries a failed run under its key as a new attempt that continues from its cursor; the failed run stays failed", async () => {
    const entity = await createEntityFor(h, token, { name: "Capture Three" });
    await ingest(entity.id, 1, "retry");
    const first = await sweep({ entity_id: entity.id, idempotency_key: "capture-three-key" });
    expect(first.status).toBe(202);
    expect(first.body).toMatchObject({ attempt: 1, retry_of: null });
    // The run enriched its first original, saved its cursor and statistics, then failed for good.
    const [done, rest] = await h.deps.db.content.findMany({
      where: { entityId: entity.id },
      orderBy: [{ createdAt: "asc" }, { id: "asc" }],
      select: { id: true, createdAt: true },
    });
    await enrichContent(h.deps.pool, createBulkEmbedder(h.config), [done?.id as string]);
    const failed = await h.deps.db.sweepRun.update({
      where: { id: first.body.run_id },
      data: {
        status: "failed",
        error: "the embeddings provider was down",
        attempts: 5,
        startedAt: new Date(),
        finishedAt: new Date(),
        cursorCreatedAt: done?.createdAt,
        cursorId: done?.id,
        statistics: { originals: 2, enriched: 1, already_enriched: 0, missing: 0, opinion_units_inserted: 0, remaining: null },
      },
    });
    const failedAnswer = await h.http.get(first.body.next).set(bearer(token));
    expect(failedAnswer.body).toMatchObject({ status: "failed", error: "the embeddings provider was down", attempt: 1 });

    const workers = h.startWorkers({ "sweep.run.v1": sweepProcessor });
    try {
      const retried = await sweep({ entity_id: entity.id, idempotency_key: "capture-three-key" });
      expect(retried.status, JSON.stringify(retried.body)).toBe(200);
      expect(retried.body).toMatchObject({
        status: "completed",
        error: null,
        attempt: 2,
        retry_of: first.body.run_id,
        attempts: 1,
        cutoff: first.body.cutoff,
        // It continued after the cursor: the first original is not enriched again.
        statistics: { originals: 2, enriched: 2, remaining: 0 },
      });
      expect(retried.body.run_id).not.toBe(first.body.run_id);
      expect((await enrichedState([rest?.id as string]))[0]?.enrichedAt).toBeInstanceOf(Date);

      // The failed run is exactly as it ended (its stale queue entry ran and changed nothing).
      await until(async () => ((await h.deps.queues.get("enrichment").getJob(jobIds.sweep(failed.id))) ? undefined : true));
      expect(await h.deps.db.sweepRun.findUniqueOrThrow({ where: { id: failed.id } })).toEqual(failed);
      expect((await h.http.get(first.body.next).set(bearer(token))).body).toEqual(failedAnswer.body);
      // The key answers its newest attempt.
      const replay = await sweep({ entity_id: entity.id, idempotency_key: "capture-three-key" });
      expect(replay.body).toEqual(retried.body);
      expect(await h.deps.db.sweepRun.count({ where: { idempotencyKey: "capture-three-key" } })).toBe(2);
    } finally {
      await workers.close();
    }
  });

  it("two concurrent retries of a failed run make one new attempt", async () => {
    const entity = await createEntityFor(h, token, { name: "Capture Six" });
    const first = await sweep({ entity_id: entity.id, idempotency_key: "capture-six-key" });
    expect(first.status).toBe(202);
    const failed = await h.deps.db.sweepRun.update({
      where: { id: first.body.run_id },
      data: { status: "failed", error: "gave up", finishedAt: new Date() },
    });
    const answers = await Promise.all([1, 2, 3].map(() => sweep({ entity_id: entity.id, idempotency_key: "capture-six-key" })));
    const ids = new Set(answers.map((a) => a.body.run_id));
    expect(ids.size).toBe(1);
    expect(ids.has(failed.id)).toBe(false);
    for (const a of answers) expect(a.body).toMatchObject({ attempt: 2, retry_of: failed.id });
    const rows = await h.deps.db.sweepRun.findMany({ where: { idempotencyKey: "capture-six-key" }, orderBy: { attempt: "asc" } });
    expect(rows.map((r) => [r.attempt, r.status])).toEqual([
      [1, "failed"],
      [2, "queued"],
    ]);
    expect(rows[0]).toEqual(failed);
    // A cancel of the new attempt leaves the failed one alone; the key then answers the cancelled attempt.
    const cancelled = await h.http.post(`/api/sweeps/runs/${rows[1]?.id}/cancel`).set(bearer(token));
    expect(cancelled.body).toMatchObject({ status: "cancelled", attempt: 2 });
    const after = await sweep({ entity_id: entity.id, idempotency_key: "capture-six-key" });
    expect(after.body).toMatchObject({ run_id: rows[1]?.id, status: "cancelled" });
    expect(await h.deps.db.sweepRun.findUniqueOrThrow({ where: { id: failed.id } })).toEqual(failed);
  });

  it("validates the body (422), hides other callers' entities and runs (404), and takes a bearer or an ingest key", async () => {
    const entity = await createEntityFor(h, token, { name: "Capture Four" });
    const short = await sweep({ entity_id: entity.id, idempotency_key: "short" });
    expect(short.status).toBe(422);
    expect(short.body.detail[0]).toMatchObject({ loc: ["body", "idempotency_key"], type: "string_too_short" });
    const missing = await sweep({ idempotency_key: "capture-four-key" });
    expect(missing.body.detail[0]).toMatchObject({ loc: ["body", "entity_id"], type: "missing" });

    const stranger = await h.token();
    const foreign = await sweep({ entity_id: entity.id, idempotency_key: "capture-four-key" }, bearer(stranger));
    expect(foreign.status).toBe(404);
    expect(await h.deps.db.sweepRun.count({ where: { entityId: entity.id } })).toBe(0);

    const exportKey = await createKeyFor(h, token, ["export"]);
    expect((await sweep({ entity_id: entity.id, idempotency_key: "capture-four-key" }, { "X-API-Key": exportKey.raw_key })).status).toBe(
      403,
    );
    const ingestKey = await createKeyFor(h, token, ["ingest"]);
    const mine = await sweep({ entity_id: entity.id, idempotency_key: "capture-four-key" }, { "X-API-Key": ingestKey.raw_key });
    expect([200, 202]).toContain(mine.status);
    expect((await h.http.get(mine.body.next).set(bearer(stranger))).status).toBe(404);
    expect((await h.http.get("/api/sweeps/runs/not-a-uuid").set(bearer(token))).status).toBe(404);
  });
});
