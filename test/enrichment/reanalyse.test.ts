import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runAdminCommand } from "../../src/governance/admin/commands.js";
import { createBulkEmbedder } from "../../src/insights/embed/provider.js";
import { ANALYSER_VERSION } from "../../src/insights/enrichment/opinions.js";
import { reanalyseContent } from "../../src/insights/enrichment/reanalyse.js";
import { enrichContent } from "../../src/insights/enrichment/service.js";
import { reanalysisProcessor } from "../../workers/enrichment.js";
import { addEntity, createTenant, storeSources, type Tenant, waitFor } from "../analysis/fixtures.js";
import { createHarness, type Harness } from "../helpers/harness.js";
import { recountDaily, recountSources, storedDaily, storedSources } from "../helpers/rollups.js";

/**
 * Re-analysis after the analyser changed: the `reanalyse` operator command queues the enriched rows whose
 * units are of another analyser version (or that have none), behind new rows' enrichment; the worker
 * replaces their units and feedback kind with the current analyser's, keeping the ids of unchanged spans,
 * and the units' roll-ups stay equal to a recount from the units.
 */
let h: Harness;
let tenant: Tenant;
let other: string;
let stale: string;
let emptied: string;
let codeOnly: string;
let fresh: string;
let unenriched: string;
let otherRow: string;

async function expectRollupsExact() {
  const daily = await recountDaily(h.deps.db);
  expect(daily.length).toBeGreaterThan(0);
  expect(await storedDaily(h.deps.db)).toEqual(daily);
  const sources = await recountSources(h.deps.db);
  expect(sources.length).toBeGreaterThan(0);
  expect(await storedSources(h.deps.db)).toEqual(sources);
}

/** Each row's units as the analyser gave them (not their ids), and its feedback kind. */
async function readings(ids: string[]) {
  const units = await h.deps.db.opinionUnit.findMany({
    where: { contentId: { in: ids } },
    orderBy: [{ contentId: "asc" }, { startOffset: "asc" }],
  });
  const rows = await h.deps.db.content.findMany({
    where: { id: { in: ids } },
    select: { id: true, enrichment: { select: { feedbackKind: true, feedbackKindConfidence: true } } },
    orderBy: { id: "asc" },
  });
  return {
    units: units.map(({ id: _id, createdAt: _c, ...rest }) => rest),
    kinds: rows,
  };
}

const enrichmentQueue = () => h.deps.queues.get("enrichment");
const queuedReanalysis = async () =>
  (await enrichmentQueue().getJobs(["prioritized", "waiting", "active", "delayed"]))
    .filter((j) => j.name === "enrichment.reanalyse.v1")
    .flatMap((j) => (j.data as { contentIds: string[] }).contentIds);

beforeAll(async () => {
  h = await createHarness();
  tenant = await createTenant(h);
  other = await addEntity(h, tenant, "Other Co");
  const ids = await storeSources(h, tenant, [
    { platform: "reddit", content: "The sync is painfully slow and it crashed twice today. Support was friendly though." },
    { platform: "reddit", content: "Please add a dark mode. The editor itself is lovely." },
    { platform: "github", content: "```\nconst x = load();\nx.run();\n```" },
    { platform: "reddit", content: "Pricing is far too high for what you get." },
    { platform: "reddit", content: "I switched to Bear because search never finds anything." },
  ]);
  [stale, emptied, codeOnly, fresh, unenriched] = ids as [string, string, string, string, string];
  otherRow = (await storeSources(h, tenant, [{ platform: "reddit", content: "Exports keep failing on large files." }], other))[0]!;
  // Only the jobs this file queues itself: the ingest's own enrichment jobs go.
  await enrichmentQueue().obliterate({ force: true });
  await enrichContent(h.deps.pool, createBulkEmbedder(h.deps.config), [stale, emptied, codeOnly, fresh, otherRow]);
});
afterAll(() => h.close());

describe("re-analysis by the current analyser", () => {
  it("queues the rows with older units or none, replaces their units and kinds, and keeps the roll-ups exact", async () => {
    const rows = [stale, emptied, codeOnly, fresh];
    const expected = await readings(rows);
    expect(expected.units.filter((u) => u.contentId === stale).length).toBeGreaterThanOrEqual(2);
    expect(expected.units.filter((u) => u.contentId === codeOnly)).toEqual([]);
    const staleIds = (await h.deps.db.opinionUnit.findMany({ where: { contentId: stale }, orderBy: { startOffset: "asc" } })).map(
      (u) => u.id,
    );

    // As an older analyser left them: other aspects and labels under an older version, no units at all, no kind.
    await h.deps.db.$executeRaw`
      UPDATE opinion_units SET analyser_version = ${ANALYSER_VERSION - 1}, aspect = 'stale aspect', sentiment_label = 'neutral'
      WHERE content_id = ${stale}::uuid`;
    await h.deps.db.$executeRaw`DELETE FROM opinion_units WHERE content_id = ${emptied}::uuid`;
    await h.deps.db
      .$executeRaw`UPDATE content_enrichment SET feedback_kind = NULL, feedback_kind_confidence = NULL WHERE content_id = ${emptied}::uuid`;
    await expectRollupsExact();

    // The other entity's rows and the row not enriched yet are not queued; the code-only row has no units, so it is.
    expect(await runAdminCommand(h.deps, ["reanalyse", tenant.entityId])).toBe(
      `queued 3 row(s) for re-analysis by analyser version ${ANALYSER_VERSION} in 1 job(s) for entity ${tenant.entityId}`,
    );
    expect((await queuedReanalysis()).sort()).toEqual([stale, emptied, codeOnly].sort());
    // Behind the enrichment of new rows: a job with a priority waits while any without one is waiting.
    expect(await enrichmentQueue().getJobCounts("prioritized")).toMatchObject({ prioritized: 1 });

    const workers = h.startWorkers({ "enrichment.reanalyse.v1": reanalysisProcessor });
    try {
      await waitFor(
        async () => ((await queuedReanalysis()).length === 0 && (await enrichmentQueue().getActiveCount()) === 0 ? true : undefined),
        20_000,
        "the re-analysis job to finish",
      );
    } finally {
      await workers.close();
    }

    expect(await readings(rows)).toEqual(expected);
    // Units whose span did not change keep their ids.
    const after = await h.deps.db.opinionUnit.findMany({ where: { contentId: stale }, orderBy: { startOffset: "asc" } });
    expect(after.map((u) => u.id)).toEqual(staleIds);
    await expectRollupsExact();
    const unenrichedUnits = await h.deps.db.opinionUnit.count({ where: { contentId: unenriched } });
    expect(unenrichedUnits).toBe(0);
  });

  it("leaves rows of the current analyser (or a newer one) alone, and answers what it did with each id", async () => {
    // Units a newer analyser wrote (a worker already upgraded, during a rolling deploy) are not taken back.
    await h.deps.db.$executeRaw`UPDATE opinion_units SET analyser_version = ${ANALYSER_VERSION + 1} WHERE content_id = ${fresh}::uuid`;
    const before = await readings([stale, fresh, otherRow]);
    const missing = randomUUID();
    const result = await reanalyseContent(h.deps.pool, [stale, emptied, codeOnly, fresh, otherRow, unenriched, missing]);
    expect(result).toEqual({
      requested: 7,
      reanalysed: 1, // the code-only row: it has no units, so the analyser reads it again (and finds none)
      current: 4,
      notEnriched: 1,
      missing: 1,
      unitsRemoved: 0,
      unitsInserted: 0,
    });
    expect(await readings([stale, fresh, otherRow])).toEqual(before);
    expect(await runAdminCommand(h.deps, ["reanalyse"])).toBe(
      `queued 1 row(s) for re-analysis by analyser version ${ANALYSER_VERSION} in 1 job(s)`,
    );
    await enrichmentQueue().obliterate({ force: true });
  });

  it("refuses an entity id that is not one, or names no entity", async () => {
    await expect(runAdminCommand(h.deps, ["reanalyse", "not-an-id"])).rejects.toMatchObject({
      exitCode: 2,
      message: "reanalyse: entity_id 'not-an-id' is not a uuid\nusage: npm run admin -- reanalyse [entity_id]",
    });
    const missing = randomUUID();
    await expect(runAdminCommand(h.deps, ["reanalyse", missing])).rejects.toMatchObject({
      exitCode: 1,
      message: `no entity ${missing}; nothing was queued`,
    });
    expect(await queuedReanalysis()).toEqual([]);
  });
});
