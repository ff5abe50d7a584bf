import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearer, comment, countRows, createEntityFor, source } from "../helpers/evidence.js";
import { createHarness, type Harness } from "../helpers/harness.js";

let h: Harness;
let token: string;
beforeAll(async () => {
  h = await createHarness();
  token = await h.token();
});
afterAll(() => h.close());

const ingest = (body: Record<string, unknown>) => h.http.post("/agent/v1/ingest/content").set(bearer(token)).send(body);

describe("concurrent ingest", () => {
  it("identical batches racing end with one row per original and counts that add up", async () => {
    const entity = await createEntityFor(h, token);
    const sources = Array.from({ length: 120 }, (_, i) =>
      source(i, { comments: [comment(3 * i), comment(3 * i + 1), comment(3 * i + 2)] }),
    );
    const body = { entity_id: entity.id, sources };
    const results = await Promise.all(Array.from({ length: 8 }, () => ingest(body)));

    for (const res of results) {
      expect(res.status).toBe(200);
      expect(res.body.total_received).toBe(480);
      expect(res.body.inserted + res.body.skipped_dedup).toBe(480);
      expect(res.body.stored).toBe(480);
    }
    // Every original was inserted by exactly one of the racing requests.
    expect(results.reduce((n, r) => n + r.body.inserted, 0)).toBe(480);
    expect(results.reduce((n, r) => n + r.body.comments_inserted, 0)).toBe(360);
    // All requests acknowledge the same rows.
    const ids = results[0]?.body.content_ids as string[];
    expect(new Set(ids).size).toBe(480);
    for (const res of results) expect(res.body.content_ids).toEqual(ids);
    expect(await countRows(h, entity.id)).toEqual({ sources: 120, comments: 360 });
  });

  it("overlapping batches in opposite orders neither deadlock nor duplicate", async () => {
    const entity = await createEntityFor(h, token);
    const all = Array.from({ length: 200 }, (_, i) => source(i, { comments: [comment(i)] }));
    const forward = { entity_id: entity.id, sources: all.slice(0, 150) };
    const backward = { entity_id: entity.id, sources: all.slice(50).reverse() };
    const results = await Promise.all([ingest(forward), ingest(backward), ingest(forward), ingest(backward)]);
    for (const res of results) expect(res.status).toBe(200);
    expect(results.reduce((n, r) => n + r.body.inserted, 0)).toBe(400);
    expect(await countRows(h, entity.id)).toEqual({ sources: 200, comments: 200 });
    const rows = await h.deps.db.$queryRaw<{ n: number }[]>`
      SELECT count(*)::int AS n FROM content_store c JOIN content_store p ON p.id = c.parent_id
      WHERE c.entity_id = ${entity.id}::uuid AND c.kind = 'comment'`;
    expect(rows[0]?.n).toBe(200);
  });
});

describe("a copy that meets a concurrent batch's key", () => {
  it("is rolled back whole and the batch is written row by row, reusing the other batch's original", async () => {
    const entity = await createEntityFor(h, token);
    const body = { entity_id: entity.id, sources: [source(1, { comments: [comment(1)] }), source(2)] };
    // The second source's original is stored, its row removed, and the same row (id and dedup key) stored
    // again by another transaction that stays open: the copy's read of stored keys does not see it, and
    // the COPY waits on the unique index until that transaction commits, then fails on the key.
    const first = await ingest({ entity_id: entity.id, sources: [source(2)] });
    expect(first.status).toBe(200);
    const removed = await h.deps.pool.query<{ id: string; dedup_key: string }>(
      "DELETE FROM content_store WHERE id = $1 RETURNING id, dedup_key",
      [first.body.content_ids[0]],
    );
    const row = removed.rows[0] as { id: string; dedup_key: string };
    const held = await h.deps.pool.connect();
    try {
      await held.query("BEGIN");
      await held.query(
        `INSERT INTO content_store (id, entity_id, workspace_id, kind, platform, url, title, content, author, content_hash, dedup_key)
         VALUES ($1, $2, $3, 'source', 'reddit', '', '', 'held', '', 'h', $4)`,
        [row.id, entity.id, entity.workspace_id, row.dedup_key],
      );
      const racing = ingest(body).then((res) => res);
      // The request's COPY waits on the held key: seen in pg_stat_activity before the holder commits.
      const deadline = Date.now() + 10_000;
      for (;;) {
        const waiting = await h.deps.pool.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE 'COPY content_store%'",
        );
        if ((waiting.rows[0]?.n ?? 0) > 0) break;
        if (Date.now() > deadline) throw new Error("the COPY never waited on the held key");
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      await held.query("COMMIT");
      const res = await racing;
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ inserted: 2, skipped_dedup: 1, stored: 3, comments_inserted: 1 });
      expect(res.body.parent_content_ids[1]).toBe(row.id);
      expect(await countRows(h, entity.id)).toEqual({ sources: 2, comments: 1 });
    } finally {
      held.release();
    }
  });
});
