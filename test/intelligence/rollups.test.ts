import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createBulkEmbedder } from "../../src/insights/embed/provider.js";
import { enrichContent } from "../../src/insights/enrichment/service.js";
import { bearer, createEntityFor } from "../helpers/evidence.js";
import { createHarness, type Harness } from "../helpers/harness.js";
import { recountDaily, storedDaily } from "../helpers/rollups.js";

/**
 * The opinion-unit rollups the intelligence summary reads are kept exact by triggers: after every
 * kind of change to opinion units (the enrichment's inserts, repeated inserts, inserts into an
 * original that has units, updates, deletes, concurrent writers, truncation) they equal a
 * recount from the units themselves. Units carry the moment of their original, or none when the
 * original is not evidence.
 */
let h: Harness;
let token: string;
let entityId: string;
let ids: string[];

const recount = () => recountDaily(h.deps.db);
const rollups = () => storedDaily(h.deps.db);
async function expectExact() {
  const expected = await recount();
  expect(expected.length).toBeGreaterThan(0);
  expect(await rollups()).toEqual(expected);
}

const unit = (contentId: string, start: number, text: string, aspect: string | null, label: string, kind = "opinion") => ({
  contentId,
  entityId,
  startOffset: start,
  endOffset: start + text.length,
  text,
  aspect,
  sentiment: label === "negative" ? -0.5 : label === "positive" ? 0.5 : 0,
  sentimentLabel: label,
  kind,
  analyserVersion: 2,
});

beforeAll(async () => {
  h = await createHarness();
  token = await h.token();
  entityId = (await createEntityFor(h, token, { name: "Rollup Co" })).id;
  const res = await h.http
    .post("/agent/v1/ingest/content")
    .set(bearer(token))
    .send({
      entity_id: entityId,
      sources: [
        { id: "a", platform: "reddit", published_at: "2026-03-01T10:00:00Z", content: "The pricing is too expensive. Sync is great." },
        { id: "b", platform: "reddit", published_at: "2026-03-01T23:59:00Z", content: "Sync keeps failing and I lost my notes." },
        {
          id: "c",
          platform: "hackernews",
          content: "Support answered fast. Please add a CSV export.",
          comments: [{ text: "The export is broken for me too." }],
        },
        { id: "n", platform: "meetingnotes", content: "Weekly sync with Acme: pricing review.", metadata: { kind: "meeting_note" } },
      ],
    })
    .expect(200);
  ids = res.body.content_ids;
  await enrichContent(h.deps.pool, createBulkEmbedder(h.config), ids);
});
afterAll(() => h.close());

describe("opinion unit rollups", () => {
  it("are exact after the enrichment writes units, and units carry their original's moment (none for a meeting note's own row)", async () => {
    await expectExact();
    const units = await h.deps.db.opinionUnit.findMany({ select: { contentId: true, seenAt: true } });
    const seen = (id: string) => units.filter((u) => u.contentId === id).map((u) => u.seenAt?.toISOString() ?? null);
    expect(seen(ids[0] as string).every((s) => s === "2026-03-01T10:00:00.000Z")).toBe(true);
    const stored = await h.deps.db.content.findUniqueOrThrow({ where: { id: ids[2] as string } });
    expect(seen(ids[2] as string).every((s) => s === stored.createdAt.toISOString())).toBe(true);
    const note = seen(ids[3] as string);
    expect(note.length).toBeGreaterThan(0);
    expect(note.every((s) => s === null)).toBe(true);
  });

  it("stay exact when units are added to an original that has some, repeated, updated, deleted and written concurrently", async () => {
    const [a, b, c] = ids as [string, string, string];
    // Into an original with units: one more on an aspect and side it already has, one on a new aspect.
    await h.deps.db.opinionUnit.createMany({
      data: [unit(a, 100, "extra pricing gripe", "pricing", "negative"), unit(a, 200, "battery drains", "battery", "negative")],
    });
    await expectExact();
    // The same units again: skipped, nothing counted twice.
    await h.deps.db.opinionUnit.createMany({ data: [unit(a, 100, "extra pricing gripe", "pricing", "negative")], skipDuplicates: true });
    await expectExact();
    // A unit changes aspect and side; another moves to another original.
    await h.deps.db
      .$executeRaw`UPDATE opinion_units SET aspect = 'speed', sentiment_label = 'positive' WHERE content_id = ${a}::uuid AND start_offset = 200`;
    await expectExact();
    await h.deps.db.$executeRaw`UPDATE opinion_units SET content_id = ${b}::uuid WHERE content_id = ${a}::uuid AND start_offset = 100`;
    await expectExact();
    // Deletes: one unit, then every unit of an original.
    await h.deps.db.$executeRaw`DELETE FROM opinion_units WHERE content_id = ${b}::uuid AND start_offset = 100`;
    await expectExact();
    await h.deps.db.$executeRaw`DELETE FROM opinion_units WHERE content_id = ${c}::uuid`;
    await expectExact();
    // One statement with the first units of an original and more of another (the recounting path), then
    // the first units of an original alone (counted from the inserted rows), then they go again.
    await h.deps.db.opinionUnit.createMany({
      data: [unit(c, 700, "export fails", "export", "negative"), unit(a, 700, "sync is quick", "sync", "positive")],
    });
    await expectExact();
    await h.deps.db.$executeRaw`DELETE FROM opinion_units WHERE start_offset = 700`;
    await h.deps.db.opinionUnit.createMany({
      data: [unit(c, 710, "export fails", "export", "negative"), unit(c, 730, "export is slow", "export", "negative")],
    });
    await expectExact();
    await h.deps.db.$executeRaw`DELETE FROM opinion_units WHERE content_id = ${c}::uuid`;
    await expectExact();
    // Concurrent writers, each inserting units of several originals.
    await Promise.all(
      [300, 400, 500, 600].map((start) =>
        h.deps.db.opinionUnit.createMany({
          data: [
            unit(a, start, `note ${start}`, "sync", "positive"),
            unit(b, start, `note ${start}`, start % 200 === 0 ? "sync" : "ui", "negative"),
          ],
        }),
      ),
    );
    await expectExact();
    // Enrichment of the originals whose units were removed writes them again.
    await h.deps.db.contentEnrichment.updateMany({ where: { contentId: c }, data: { enrichedAt: null } });
    await enrichContent(h.deps.pool, createBulkEmbedder(h.config), [c]);
    await expectExact();
  });

  it("count an original once when two transactions add its first units of one aspect at the same time", async () => {
    const [a] = ids as [string];
    const first = new pg.Client({ connectionString: h.config.DATABASE_URL });
    const second = new pg.Client({ connectionString: h.config.DATABASE_URL });
    await Promise.all([first.connect(), second.connect()]);
    const insert = (client: pg.Client, start: number) =>
      client.query(
        `INSERT INTO opinion_units (id, content_id, entity_id, start_offset, end_offset, text, aspect, sentiment, sentiment_label, kind, analyser_version)
         VALUES (gen_random_uuid(), $1, $2, $3, $3 + 4, 'text', 'latency', -0.5, 'negative', 'opinion', 2)`,
        [a, entityId, start],
      );
    try {
      await first.query("BEGIN");
      await second.query("BEGIN");
      await insert(first, 900);
      // The second writer of the same original waits for the first to finish, then counts after it.
      const waiting = insert(second, 950).then(() => second.query("COMMIT"));
      await new Promise((resolve) => setTimeout(resolve, 200));
      await first.query("COMMIT");
      await waiting;
    } finally {
      await Promise.all([first.end(), second.end()]);
    }
    await expectExact();
    const latency = (await rollups()).filter((r) => r.key.includes("|2|latency|complaint"));
    expect(latency.map((r) => [r.statements, r.sources])).toEqual([[2, 1]]);
  });

  it("are emptied with the units", async () => {
    await h.deps.db.$executeRaw`TRUNCATE opinion_units`;
    expect(await h.deps.db.$queryRaw<{ n: number }[]>`SELECT count(*)::int AS n FROM opinion_rollups`).toEqual([{ n: 0 }]);
  });

  it("take one lock per entity, so one statement can write or delete the units of 20,000 originals", async () => {
    // More originals than the server's lock table holds locks for one transaction (64 per connection by default).
    const big = (await createEntityFor(h, token, { name: "Big Rollup Co" })).id;
    await h.deps.db.$executeRaw`
      INSERT INTO content_store (id, entity_id, workspace_id, kind, platform, content, content_hash, dedup_key, published_at)
      SELECT gen_random_uuid(), e.id, e.workspace_id, 'source', 'reddit', 'Sync keeps failing, again and again.', md5(g::text),
        'big:' || g, timestamptz '2026-03-01' + (g % 90) * interval '1 day'
      FROM entities e, generate_series(1, 20000) g WHERE e.id = ${big}::uuid`;
    const written = await h.deps.db.$executeRaw`
      INSERT INTO opinion_units (id, content_id, entity_id, start_offset, end_offset, text, aspect, sentiment, sentiment_label, kind, analyser_version)
      SELECT gen_random_uuid(), c.id, c.entity_id, 0, 19, 'Sync keeps failing,', 'sync', -0.5, 'negative', 'opinion', 2
      FROM content_store c WHERE c.entity_id = ${big}::uuid`;
    expect(written).toBe(20000);
    await expectExact();
    const deleted = await h.deps.db.$executeRaw`DELETE FROM opinion_units WHERE entity_id = ${big}::uuid`;
    expect(deleted).toBe(20000);
    const left = await h.deps.db.$queryRaw<{ n: bigint }[]>`
      SELECT coalesce(sum(sources), 0)::bigint AS n FROM opinion_rollups WHERE entity_id = ${big}::uuid`;
    expect(Number(left[0]?.n)).toBe(0);
    expect(await rollups()).toEqual(await recount());
  }, 60_000);
});
