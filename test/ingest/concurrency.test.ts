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
