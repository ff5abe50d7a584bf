import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearer, countRows, createEntityFor, source } from "../helpers/evidence.js";
import { createHarness, type Harness } from "../helpers/harness.js";

/**
 * A process writes at most INGEST_WRITERS ingest batches at once (src/intake/ingest/writers.ts); a batch
 * past the limit waits its turn in the process, before it takes a connection, and is then stored whole.
 * The first batch is held inside its transaction by the workspace's erasure lock, which the test takes
 * exclusively (as recording an erasure does); a batch for another workspace then waits for a writer with
 * one writer, and is stored at once with two. Real HTTP and PostgreSQL; `/metrics` shows the waiting batch.
 */
const harnesses: Harness[] = [];

beforeAll(async () => {
  harnesses.push(await createHarness({ INGEST_WRITERS: "1" }), await createHarness({ INGEST_WRITERS: "2" }));
});
afterAll(() => Promise.all(harnesses.map((h) => h.close())));

/** Polls until `check` answers true (bounded). */
async function until(what: string, check: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`timed out waiting for ${what}`);
}

async function waitingBatches(h: Harness): Promise<number> {
  const metrics = await h.http.get("/metrics").auth("operator", "operator-password");
  return Number(/ingest_batches\{state="waiting"\} (\d+)/.exec(metrics.text)?.[1] ?? Number.NaN);
}

/** Backends of this database blocked on an advisory lock (the held batch's transaction). */
async function blockedOnLock(h: Harness): Promise<number> {
  const [row] = await h.deps.db.$queryRaw<{ n: number }[]>`
    SELECT count(*)::int AS n FROM pg_stat_activity
    WHERE datname = current_database() AND wait_event_type = 'Lock' AND wait_event = 'advisory'`;
  return row?.n ?? 0;
}

describe("ingest batches that take turns", () => {
  it.each([
    [1, "waits for the one writer while the held batch writes"],
    [2, "is stored at once beside the held batch"],
  ])("INGEST_WRITERS=%i: a second workspace's batch %s; both are stored whole", async (writers) => {
    const h = harnesses[writers - 1] as Harness;
    const [tokenA, tokenB] = [await h.token(), await h.token()];
    const [heldEntity, otherEntity] = [await createEntityFor(h, tokenA), await createEntityFor(h, tokenB)];
    const batch = (entityId: string, from: number) => ({
      entity_id: entityId,
      sources: Array.from({ length: 20 }, (_, i) => source(from + i)),
    });

    // Advisory locks belong to their database: the locker connects to this harness's own.
    const locker = new pg.Client({ connectionString: h.config.DATABASE_URL });
    await locker.connect();
    await locker.query("SELECT pg_advisory_lock(hashtextextended('author-erasures:' || $1::uuid::text, 0))", [heldEntity.workspace_id]);
    let released = false;
    try {
      // A supertest request is sent once something waits on it: `then` starts it in the background.
      const held = h.http
        .post("/agent/v1/ingest/content")
        .set(bearer(tokenA))
        .send(batch(heldEntity.id, 0))
        .then((res) => res);
      await until("the first batch to block on the erasure lock", async () => (await blockedOnLock(h)) === 1);
      const other = h.http
        .post("/agent/v1/ingest/content")
        .set(bearer(tokenB))
        .send(batch(otherEntity.id, 100))
        .then((res) => res);

      if (writers === 1) {
        await until("the second batch to wait for a writer", async () => (await waitingBatches(h)) === 1);
        expect(await countRows(h, otherEntity.id)).toEqual({ sources: 0, comments: 0 });
      } else {
        const res = await other;
        expect(res.status).toBe(200);
        expect(res.body.inserted).toBe(20);
        expect(await waitingBatches(h)).toBe(0);
        expect(await countRows(h, heldEntity.id)).toEqual({ sources: 0, comments: 0 });
      }

      await locker.query("SELECT pg_advisory_unlock(hashtextextended('author-erasures:' || $1::uuid::text, 0))", [heldEntity.workspace_id]);
      released = true;
      for (const res of await Promise.all([held, other])) {
        expect(res.status).toBe(200);
        expect(res.body.inserted).toBe(20);
      }
      expect(await countRows(h, heldEntity.id)).toEqual({ sources: 20, comments: 0 });
      expect(await countRows(h, otherEntity.id)).toEqual({ sources: 20, comments: 0 });
      expect(await waitingBatches(h)).toBe(0);
    } finally {
      if (!released) await locker.query("SELECT pg_advisory_unlock_all()");
      await locker.end();
    }
  });
});
