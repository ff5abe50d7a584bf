import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createBulkEmbedder } from "../../src/insights/embed/provider.js";
import { type Analyser, analyseInline } from "../../src/insights/enrichment/analyse.js";
import { enrichContent } from "../../src/insights/enrichment/service.js";
import { createTenant, storeSources, type Tenant } from "../analysis/fixtures.js";
import { createHarness, type Harness } from "../helpers/harness.js";

// A chunk's row update and its units are one transaction: when the units cannot be written, the rows are not
// marked enriched either. No workers run here, so the ingested rows wait for the enrichment the test calls.
let h: Harness;
let tenant: Tenant;

beforeAll(async () => {
  h = await createHarness();
  tenant = await createTenant(h, "Atomic Notes");
});
afterAll(() => h.close());

const unitsOf = async (ids: string[]) =>
  (
    await h.deps.pool.query<{ contentId: string; text: string; startOffset: number; endOffset: number }>(
      `SELECT content_id AS "contentId", text, start_offset AS "startOffset", end_offset AS "endOffset"
       FROM opinion_units WHERE content_id = ANY($1::uuid[]) ORDER BY content_id, start_offset`,
      [ids],
    )
  ).rows;

describe("an enrichment chunk", () => {
  it("commits nothing of the chunk when its units cannot be written", async () => {
    const ids = await storeSources(h, tenant, [
      { platform: "web", content: "The export is broken and I hate it." },
      { platform: "web", content: "Search works fine." },
    ]);
    // A unit of a kind the table refuses (its check constraint): the insert fails after the rows' update ran.
    const refused: Analyser = async (rows) =>
      (await analyseInline(rows)).map((row) => ({ ...row, spans: row.spans.map((span) => ({ ...span, kind: "nonsense" as "opinion" })) }));
    await expect(enrichContent(h.deps.pool, createBulkEmbedder(h.config), ids, refused)).rejects.toThrow(/opinion_units_kind_check/);
    const rows = await h.deps.pool.query<{ enriched: number }>(
      `SELECT count(*) FILTER (WHERE e.enriched_at IS NOT NULL)::int AS enriched
       FROM content_store c LEFT JOIN content_enrichment e ON e.content_id = c.id WHERE c.id = ANY($1::uuid[])`,
      [ids],
    );
    expect(rows.rows[0]!.enriched).toBe(0);
    expect(await unitsOf(ids)).toEqual([]);
    // The same rows enrich normally afterwards: nothing was left half-written or locked.
    expect(await enrichContent(h.deps.pool, createBulkEmbedder(h.config), ids)).toMatchObject({ enriched: 2 });
  });
});
