import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createBulkEmbedder } from "../../src/insights/embed/provider.js";
import { reanalyseContent } from "../../src/insights/enrichment/reanalyse.js";
import { enrichContent } from "../../src/insights/enrichment/service.js";
import { createTenant, storeSources, type Tenant } from "../analysis/fixtures.js";
import { createHarness, type Harness } from "../helpers/harness.js";

let h: Harness;
let tenant: Tenant;
let ids: string[];

const TEXT = "The export is broken since the update. Support was quick and friendly.";

beforeAll(async () => {
  h = await createHarness();
  tenant = await createTenant(h);
  ids = await storeSources(h, tenant, [
    { platform: "reddit", content: TEXT, published_at: "2026-03-04T05:06:07.891Z" },
    { platform: "reddit", content: TEXT },
    { platform: "reddit", content: TEXT, published_at: "2026-05-06T07:08:09.012Z" },
    { platform: "reddit", content: TEXT, published_at: "2026-07-08T09:10:11.123Z" },
  ]);
  // The third is a meeting note and the fourth a summary: their units are dated by no day.
  await h.deps.pool.query(`UPDATE content_store SET metadata = coalesce(metadata, '{}') || '{"kind":"meeting_note"}' WHERE id = $1`, [
    ids[2],
  ]);
  await h.deps.pool.query("UPDATE content_store SET kind = 'summary' WHERE id = $1", [ids[3]]);
});
afterAll(() => h.close());

/** Each unit's date beside its original's published and stored dates. */
async function unitDates() {
  const { rows } = await h.deps.pool.query<{ contentId: string; seenAt: Date | null; publishedAt: Date | null; createdAt: Date }>(
    `SELECT u.content_id AS "contentId", u.seen_at AS "seenAt", c.published_at AS "publishedAt", c.created_at AS "createdAt"
     FROM opinion_units u JOIN content_store c ON c.id = u.content_id WHERE u.content_id = ANY($1::uuid[])`,
    [ids],
  );
  return rows;
}

describe("the date of an original's units", () => {
  it("is written by the enrichment: published, else stored, and none for meeting notes and summaries", async () => {
    await enrichContent(h.deps.pool, createBulkEmbedder(h.config), ids);
    const rows = await unitDates();
    for (const id of ids) expect(rows.filter((r) => r.contentId === id).length).toBeGreaterThan(0);
    for (const r of rows) {
      if (r.contentId === ids[0]) expect(r.seenAt?.toISOString()).toBe("2026-03-04T05:06:07.891Z");
      if (r.contentId === ids[1]) expect(r.seenAt?.toISOString()).toBe(r.createdAt.toISOString());
      if (r.contentId === ids[2] || r.contentId === ids[3]) expect(r.seenAt).toBeNull();
    }
  });

  it("is the same when the units are re-analysed", async () => {
    const before = await unitDates();
    await h.deps.pool.query("UPDATE opinion_units SET analyser_version = 1 WHERE content_id = ANY($1::uuid[])", [ids]);
    await reanalyseContent(h.deps.pool, ids);
    const after = await unitDates();
    expect(after.length).toBe(before.length);
    const key = (r: { contentId: string; seenAt: Date | null }) => `${r.contentId} ${r.seenAt?.toISOString() ?? "none"}`;
    expect(after.map(key).sort()).toEqual(before.map(key).sort());
  });

  it("is looked up for a unit written without one, and again when a unit moves to another original", async () => {
    await h.deps.pool.query(
      `INSERT INTO opinion_units (id, content_id, entity_id, start_offset, end_offset, text)
       VALUES (gen_random_uuid(), $1, $2, 4, 10, 'export')`,
      [ids[0], tenant.entityId],
    );
    const { rows: written } = await h.deps.pool.query<{ seenAt: Date }>(
      `SELECT seen_at AS "seenAt" FROM opinion_units WHERE content_id = $1 AND start_offset = 4 AND end_offset = 10`,
      [ids[0]],
    );
    expect(written[0]?.seenAt.toISOString()).toBe("2026-03-04T05:06:07.891Z");
    // Moved to a meeting note, the unit is dated by no day.
    await h.deps.pool.query("UPDATE opinion_units SET content_id = $2 WHERE content_id = $1 AND start_offset = 4 AND end_offset = 10", [
      ids[0],
      ids[2],
    ]);
    const { rows: moved } = await h.deps.pool.query<{ seenAt: Date | null }>(
      `SELECT seen_at AS "seenAt" FROM opinion_units WHERE content_id = $1 AND start_offset = 4 AND end_offset = 10`,
      [ids[2]],
    );
    expect(moved[0]?.seenAt).toBeNull();
  });
});
