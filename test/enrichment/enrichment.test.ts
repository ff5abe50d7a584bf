import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createBulkEmbedder } from "../../src/insights/embed/provider.js";
import { STATIC_DIMENSIONS, STATIC_MODEL } from "../../src/insights/embed/static.js";
import { ANALYSER_VERSION, opinionUnits, sliceCodePoints } from "../../src/insights/enrichment/opinions.js";
import { enrichContent } from "../../src/insights/enrichment/service.js";
import { deriveJobId } from "../../src/platform/queues.js";
import { enrichmentProcessor } from "../../workers/enrichment.js";
import { createTenant, storeSources, type Tenant, waitFor } from "../analysis/fixtures.js";
import { createHarness, type Harness } from "../helpers/harness.js";

let h: Harness;
let tenant: Tenant;
let ids: string[];

const TEXTS = [
  "I love the new onboarding flow, it is wonderful! The pricing is awful and I hate it.\n\nSupport answered within an hour.",
  "Great docs 🎉. The dashboard 🚀 loads slowly on mobile. Would recommend to a friend.",
  `${"Long rambling sentence without any full stop ".repeat(40)}and then it ends.`,
];

beforeAll(async () => {
  h = await createHarness();
  tenant = await createTenant(h);
  ids = await storeSources(
    h,
    tenant,
    TEXTS.map((content, i) => ({ platform: i === 1 ? "twitter" : "reddit", content, title: `Post ${i}` })),
  );
  h.startWorkers({ "enrichment.content.v1": enrichmentProcessor });
});
afterAll(() => h.close());

async function snapshot() {
  const rows = await h.deps.db.content.findMany({
    where: { id: { in: ids } },
    select: { id: true, enrichment: { select: { embedding: true, embeddingModel: true, enrichedAt: true } } },
    orderBy: { id: "asc" },
  });
  const units = await h.deps.db.opinionUnit.findMany({
    where: { contentId: { in: ids } },
    orderBy: [{ contentId: "asc" }, { startOffset: "asc" }],
  });
  return { rows, units };
}

describe("enrichment.content.v1", () => {
  it("embeds every row and stores opinion units whose offsets give back their text exactly", async () => {
    await h.deps.queues.enqueue("enrichment.content.v1", { contentIds: ids }, { jobId: deriveJobId("enrich", ...ids) });
    const rows = await waitFor(
      async () => {
        const found = await h.deps.db.content.findMany({
          where: { id: { in: ids }, enrichment: { enrichedAt: { not: null } } },
          include: { enrichment: true },
        });
        return found.length === ids.length ? found : undefined;
      },
      20_000,
      "rows to be enriched",
    );
    for (const row of rows) {
      expect(row.enrichment?.embeddingModel).toBe(STATIC_MODEL);
      expect(row.enrichment?.embedding).toHaveLength(STATIC_DIMENSIONS);
      expect(row.enrichment?.embedding.some((v) => v !== 0)).toBe(true);
    }

    const { units } = await snapshot();
    expect(units.length).toBeGreaterThanOrEqual(7);
    for (const unit of units) {
      const row = rows.find((r) => r.id === unit.contentId)!;
      expect(sliceCodePoints(row.content, unit.startOffset, unit.endOffset)).toBe(unit.text);
      expect(unit.entityId).toBe(tenant.entityId);
    }
    // The database agrees: substr() with the stored offsets is the unit text, for every unit.
    const mismatches = await h.deps.db.$queryRaw<{ n: bigint }[]>`
      SELECT count(*) AS n FROM opinion_units u JOIN content_store c ON c.id = u.content_id
      WHERE substr(c.content, u.start_offset + 1, u.end_offset - u.start_offset) <> u.text`;
    expect(Number(mismatches[0]?.n)).toBe(0);

    const byText = (t: string) => units.find((u) => u.text === t);
    expect(byText("I love the new onboarding flow, it is wonderful!")).toMatchObject({
      sentimentLabel: "positive",
      aspect: "onboarding",
      kind: "opinion",
      analyserVersion: ANALYSER_VERSION,
    });
    expect(byText("The pricing is awful and I hate it.")).toMatchObject({
      sentimentLabel: "negative",
      aspect: "pricing",
      terms: ["pricing"],
    });
    expect(byText("Support answered within an hour.")).toMatchObject({ sentimentLabel: "positive", aspect: "support" });
    expect(byText("Would recommend to a friend.")).toMatchObject({ sentimentLabel: "positive", kind: "opinion" });
    // Emoji before a unit shift JavaScript offsets but not code-point offsets.
    const dashboard = byText("The dashboard 🚀 loads slowly on mobile.");
    expect(dashboard?.startOffset).toBe(Array.from(TEXTS[1]!).indexOf("T"));
    // The long run-on text is cut into bounded units.
    const longUnits = units.filter((u) => u.contentId === ids[2]);
    expect(longUnits.length).toBeGreaterThan(1);
    for (const u of longUnits) expect(u.text.length).toBeLessThanOrEqual(1000);
  });

  it("is idempotent: running the same rows again changes nothing", async () => {
    // Ingest queued its own job for the same rows; let every queued job finish first.
    const queue = h.deps.queues.get("enrichment");
    await waitFor(async () => {
      const counts = await queue.getJobCounts("active", "waiting", "delayed", "prioritized");
      return Object.values(counts).every((n) => n === 0) ? true : undefined;
    });
    const before = await snapshot();
    const again = await enrichContent(h.deps.pool, createBulkEmbedder(h.config), [...ids, ids[0]!]);
    expect(again).toMatchObject({ requested: 3, enriched: 0, alreadyEnriched: 3, unitsInserted: 0 });

    // And through the queue, as a second delivery of the same job would.
    const job = await h.deps.queues.enqueue("enrichment.content.v1", { contentIds: ids }, { jobId: deriveJobId("enrich-again", ...ids) });
    await waitFor(async () => ((await job.getState()) === "completed" ? true : undefined), 20_000, "second job");
    expect(await snapshot()).toEqual(before);
  });

  it("runs for rows the ingest service queues, and skips ids that are not stored", async () => {
    const [fresh] = await storeSources(h, tenant, [{ platform: "github", content: "The CLI is fast. Installation failed twice." }]);
    // Ingest queues enrichment after commit; the running worker picks it up.
    await waitFor(
      async () => ((await h.deps.db.contentEnrichment.findUnique({ where: { contentId: fresh! } }))?.enrichedAt ? true : undefined),
      20_000,
      "ingested row to be enriched",
    );
    const units = await h.deps.db.opinionUnit.findMany({ where: { contentId: fresh! }, orderBy: { startOffset: "asc" } });
    expect(units.map((u) => u.text)).toEqual(["The CLI is fast.", "Installation failed twice."]);

    const result = await enrichContent(h.deps.pool, createBulkEmbedder(h.config), [fresh!, "00000000-0000-4000-8000-000000000000"]);
    expect(result).toEqual({ requested: 2, enriched: 0, alreadyEnriched: 1, missing: 1, unitsInserted: 0 });
  });

  it("two runs of the same rows at once write each row once", async () => {
    const rows = await storeSources(
      h,
      tenant,
      Array.from({ length: 6 }, (_, i) => ({
        platform: "web",
        content: `Row ${i} says the export works well. Another sentence ${i} here.`,
      })),
    );
    const embedder = createBulkEmbedder(h.config);
    const [a, b] = await Promise.all([enrichContent(h.deps.pool, embedder, rows), enrichContent(h.deps.pool, embedder, rows)]);
    // The ingest-queued job may have taken some rows first; no row is written twice either way.
    expect(a.enriched + b.enriched).toBeLessThanOrEqual(rows.length);
    const units = await h.deps.db.opinionUnit.groupBy({ by: ["contentId"], where: { contentId: { in: rows } }, _count: true });
    expect(units.map((u) => u._count)).toEqual(rows.map(() => 2));
    const stored = await h.deps.db.content.findMany({ where: { id: { in: rows } }, include: { enrichment: true } });
    const enriched = (r: (typeof stored)[number]) =>
      r.enrichment !== null && r.enrichment.enrichedAt !== null && r.enrichment.embedding.length === STATIC_DIMENSIONS;
    expect(stored.every(enriched)).toBe(true);
  });

  it("stores each row's vector, exactly as the embedder gave it, in its own row of the chunk", async () => {
    const rows = await storeSources(
      h,
      tenant,
      Array.from({ length: 5 }, (_, i) => ({ platform: "web", content: `Vector row ${i}: the search is quick and the sync is slow.` })),
    );
    // The job ingest queued runs first (with the configured embedder), so it cannot overwrite the probe's vectors.
    await waitFor(
      async () =>
        (await h.deps.db.content.count({ where: { id: { in: rows }, enrichment: { enrichedAt: { not: null } } } })) === 5
          ? true
          : undefined,
      20_000,
      "ingested rows to be enriched",
    );
    // An embedder whose vectors differ per row and hold what a remote model may send: tiny, negative,
    // large and non-finite values.
    const vectorOf = (text: string) =>
      Array.from({ length: 4 }, (_, d) => (d === 3 && text.includes("row 2") ? Number.POSITIVE_INFINITY : (text.length * (d + 1)) / -7e3));
    const embedder = { model: "probe-vectors", dimensions: 4, embed: async (texts: string[]) => texts.map(vectorOf) };
    // The originals' row versions: enrichment writes beside them (content_enrichment) and never rewrites them.
    const versions = (q: typeof h.deps.pool) =>
      q.query<{ id: string; version: string }>(
        "SELECT id, xmin::text || ':' || ctid::text AS version FROM content_store WHERE id = ANY($1::uuid[]) ORDER BY id",
        [rows],
      );
    const before = (await versions(h.deps.pool)).rows;
    const result = await enrichContent(h.deps.pool, embedder, rows, undefined, 2);
    expect(result).toMatchObject({ requested: 5, enriched: 5 });
    expect((await versions(h.deps.pool)).rows).toEqual(before);
    // The enrichment rows carry their originals' entity, platform and stored time.
    const copies = await h.deps.pool.query<{ same: boolean }>(
      `SELECT (e.entity_id, e.platform, e.created_at, e.embedding_model) = (c.entity_id, c.platform, c.created_at, 'probe-vectors') AS same
       FROM content_store c JOIN content_enrichment e ON e.content_id = c.id WHERE c.id = ANY($1::uuid[])`,
      [rows],
    );
    expect(copies.rows).toEqual(rows.map(() => ({ same: true })));
    const stored = await h.deps.pool.query<{ id: string; title: string; content: string; embedding: number[] }>(
      `SELECT c.id, c.title, c.content, e.embedding
       FROM content_store c LEFT JOIN content_enrichment e ON e.content_id = c.id WHERE c.id = ANY($1::uuid[])`,
      [rows],
    );
    expect(stored.rows).toHaveLength(5);
    for (const row of stored.rows) {
      const expected = vectorOf(row.title ? `${row.title}\n${row.content}` : row.content).map((x) =>
        Number.isFinite(x) ? Math.fround(x) : Number.NaN,
      );
      // The driver reads a real as its shortest decimal, which names the same float4.
      expect(row.embedding.map(Math.fround)).toEqual(expected);
    }
    expect(stored.rows.filter((r) => r.embedding.some(Number.isNaN))).toHaveLength(1);
  });

  it("splits text deterministically", () => {
    expect(opinionUnits(TEXTS[0]!)).toEqual(opinionUnits(TEXTS[0]!));
    expect(opinionUnits("   \n\n  ")).toEqual([]);
  });
});
